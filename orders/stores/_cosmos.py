"""What the Cosmos DB adapters share: client and container set-up, documents, errors, cost.

Containers are partitioned on ``/orderId`` and every document's ``id`` is its OrderID,
so each order's documents are point reads (1 RU for 1 KB) and each conditional write
touches one logical partition.

In Azure the client authenticates with ``DefaultAzureCredential`` (managed identity,
SPEC X10); a key is used only for the local test server. With data-plane RBAC a managed
identity cannot create databases or containers, so in Azure they come from Bicep and
``create_containers`` stays False.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from azure.core.exceptions import ServiceRequestError, ServiceResponseError
from azure.cosmos import ContainerProxy, CosmosClient, DatabaseProxy, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError

from orders.stores.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    TransientStoreError,
)

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from pydantic import BaseModel

T = TypeVar("T")

PARTITION_KEY_PATH = "/orderId"
"""Partition key of both containers: all of one order's data lives in one partition."""


_TRANSIENT = {408, 429, 449, 503}
"""Statuses that pass by themselves (timeout, throttled, retry-with, unavailable)."""

_OWNER_RESOURCE_NOT_FOUND = 1003
"""Sub-status of a 404 for a missing database or container, not a missing document."""

_READ_SESSION_NOT_AVAILABLE = 1002
"""Sub-status of a 404 for a replica behind the session token; the next read may find it."""


def open_client(
    endpoint: str,
    credential: TokenCredential | str | None = None,
    *,
    connection_verify: bool = True,
) -> CosmosClient:
    """Connect to a Cosmos DB account.

    Parameters
    ----------
    endpoint : str
        Account endpoint, e.g. ``https://<account>.documents.azure.com:443/``.
    credential : TokenCredential or str or None
        None: ``DefaultAzureCredential()`` (managed identity in Azure). A string is an
        account key, meant for the local test server
        (:data:`tests.support.cosmos_server.EMULATOR_KEY`).
    connection_verify : bool
        Verify the TLS certificate; False only for the local server's self-signed one.

    Returns
    -------
    azure.cosmos.CosmosClient
        Owns a connection pool: close it when done.
    """
    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    return CosmosClient(endpoint, credential=credential, connection_verify=connection_verify)


def open_database(
    client: CosmosClient, database: str, *, create_if_missing: bool = False
) -> DatabaseProxy:
    """Return one database of the account, creating it if asked (local use only).

    With data-plane RBAC a managed identity cannot create databases; in Azure they come
    from Bicep.

    Returns
    -------
    azure.cosmos.DatabaseProxy
    """
    if create_if_missing:
        return client.create_database_if_not_exists(id=database)
    return client.get_database_client(database)


def container(db: DatabaseProxy, name: str, *, create_if_missing: bool = False,
              partition_key_path: str = PARTITION_KEY_PATH) -> ContainerProxy:
    """Return a container partitioned on ``/orderId``, creating it if asked (local use).

    ``partition_key_path`` names another partition key (the inventory's ``/sku``).

    Returns
    -------
    azure.cosmos.ContainerProxy
    """
    if create_if_missing:
        return db.create_container_if_not_exists(
            id=name, partition_key=PartitionKey(path=partition_key_path)
        )
    return db.get_container_client(name)


def to_document(model: BaseModel, order_id: str) -> dict[str, Any]:
    """Return the camelCase JSON document of ``model`` with ``id`` = OrderID, no ETag field.

    Parameters
    ----------
    model : pydantic.BaseModel
        An :class:`~orders.models.Order` or :class:`~orders.models.StateRecord`.
    order_id : str
        The document id and partition key value.
    """
    document = model.model_dump(mode="json", by_alias=True, exclude={"etag"})
    document["id"] = order_id
    return document


def from_document(document: Mapping[str, Any], *, with_etag: bool) -> dict[str, Any]:
    """Strip Cosmos DB's system properties (``id``, ``_rid``, ``_ts``, ...) from a document.

    Parameters
    ----------
    document : Mapping
        As read from Cosmos DB.
    with_etag : bool
        Copy the system ``_etag`` into the model's ``etag`` field.
    """
    data = {k: v for k, v in document.items() if k != "id" and not k.startswith("_")}
    if with_etag:
        data["etag"] = document["_etag"]
    return data


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Turn Cosmos DB HTTP errors into :mod:`orders.stores.errors` by status code.

    Decided on the documented status and sub-status codes, never on the message text:

    - 412 -> PreconditionFailedError, 409 -> ConflictError (permanent);
    - 404 -> NotFoundError (permanent), except 404/1003 (the database or container does
      not exist: a deployment fault, StoreError) and 404/1002 (read session not yet
      available: TransientStoreError);
    - 408/429/449/503 -> TransientStoreError (retryable), with ``retry_after`` from
      ``x-ms-retry-after-ms`` when the service sent it;
    - any other status -> StoreError (permanent).

    A request that got no answer (connection failed, read timed out, after the SDK's own
    retries: azure-core ``ServiceRequestError`` / ``ServiceResponseError``) ->
    TransientStoreError.

    Parameters
    ----------
    what : str
        Operation and OrderID, for the message.

    Raises
    ------
    StoreError
        Or the subclass above; ``retryable`` is True only for TransientStoreError.
    """
    try:
        yield
    except CosmosHttpResponseError as exc:
        status, sub_status = exc.status_code, exc.sub_status
        message = f"{what}: Cosmos DB answered {status}: {exc.message}"
        if status == 412:
            raise PreconditionFailedError(
                f"{what}: the ETag is stale; another writer changed the record (re-read it)"
            ) from exc
        if status == 404 and sub_status == _OWNER_RESOURCE_NOT_FOUND:
            raise StoreError(f"{what}: the database or container does not exist (Cosmos DB "
                             f"404/{sub_status}); it is deployed by infra/main.bicep") from exc
        if status == 404 and sub_status == _READ_SESSION_NOT_AVAILABLE:
            raise TransientStoreError(message) from exc
        if status == 404:
            raise NotFoundError(message) from exc
        if status == 409:
            raise ConflictError(message) from exc
        if status in _TRANSIENT:
            raise TransientStoreError(message, retry_after=_retry_after(exc.headers)) from exc
        raise StoreError(message) from exc
    except (ServiceRequestError, ServiceResponseError) as exc:
        raise TransientStoreError(f"{what}: no answer from Cosmos DB: {exc}") from exc


def _retry_after(headers: Mapping[str, Any] | None) -> timedelta | None:
    # x-ms-retry-after-ms: milliseconds, sent with 429 (and sometimes 449/503).
    try:
        after = timedelta(milliseconds=float((headers or {})["x-ms-retry-after-ms"]))
    except (KeyError, TypeError, ValueError, OverflowError):
        return None  # absent, or not a finite number of milliseconds
    return after if after >= timedelta(0) else None


class RequestCharge:
    """A ``response_hook`` that sums ``x-ms-request-charge`` over a query's requests.

    The SDK calls it once per service request, including the extra requests it makes
    while the service returns empty pages with a continuation token.
    """

    def __init__(self) -> None:
        self.total = 0.0
        self.requests = 0

    def __call__(self, headers: Mapping[str, Any], _result: Any) -> None:
        self.requests += 1
        self.total += float(headers.get("x-ms-request-charge", 0) or 0)



def read_document(container: ContainerProxy, item: str, partition_key: str,
                  what: str) -> dict[str, Any] | None:
    """Point-read one document; None if it does not exist (404).

    Raises
    ------
    StoreError
        As :func:`translated` translates any other failure.
    """
    return _none_on(NotFoundError, what,
                    lambda: container.read_item(item=item, partition_key=partition_key))


def create_document(container: ContainerProxy, body: dict[str, Any],
                    what: str) -> dict[str, Any] | None:
    """Create one document; None if its ``id`` exists (409: the caller compares).

    Raises as :func:`read_document` does.
    """
    return _none_on(ConflictError, what, lambda: container.create_item(body=body))


def still_there(found: T | None, what: str, noun: str) -> T:
    """Return what a read after a 409 ``found``.

    Raises
    ------
    StoreError
        If it is gone: Cosmos DB reported a conflict, but the document cannot be read.
    """
    if found is None:
        raise StoreError(f"{what}: Cosmos DB reported a conflict but the {noun} is gone")
    return found


def _none_on(error: type[StoreError], what: str,
             call: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    try:
        with translated(what):
            return call()
    except error:
        return None


class CosmosAdapter:
    """Base of the Cosmos DB adapters: one container of a client the caller owns.

    Parameters
    ----------
    container : azure.cosmos.ContainerProxy
        Container partitioned on ``/orderId`` (see :func:`orders.stores.create_stores`).
    """

    def __init__(self, container: ContainerProxy) -> None:
        self._container = container

    def close(self) -> None:
        """Nothing to release: the client's connection pool belongs to the caller."""
