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

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

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

PARTITION_KEY_PATH = "/orderId"
"""Partition key of both containers: all of one order's data lives in one partition."""


_TRANSIENT = {408, 429, 449, 503}


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


def container(db: DatabaseProxy, name: str, *, create_if_missing: bool = False) -> ContainerProxy:
    """Return a container partitioned on ``/orderId``, creating it if asked (local use).

    Returns
    -------
    azure.cosmos.ContainerProxy
    """
    if create_if_missing:
        return db.create_container_if_not_exists(
            id=name, partition_key=PartitionKey(path=PARTITION_KEY_PATH)
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
    """Turn Cosmos DB HTTP errors into :mod:`orders.stores.errors` (documented status codes).

    412 -> PreconditionFailedError, 404 -> NotFoundError, 409 -> ConflictError,
    408/429/449/503 -> TransientStoreError (with ``x-ms-retry-after-ms``), else StoreError.
    A request that got no answer (connection failed, read timed out, after the SDK's own
    retries) -> TransientStoreError.

    Parameters
    ----------
    what : str
        Operation and OrderID, for the message.
    """
    try:
        yield
    except CosmosHttpResponseError as exc:
        status = exc.status_code
        message = f"{what}: Cosmos DB answered {status}: {exc.message}"
        if status == 412:
            raise PreconditionFailedError(
                f"{what}: the ETag is stale; another writer changed the record (re-read it)"
            ) from exc
        if status == 404:
            raise NotFoundError(message) from exc
        if status == 409:
            raise ConflictError(message) from exc
        if status in _TRANSIENT:
            headers = exc.headers or {}
            after_ms = headers.get("x-ms-retry-after-ms")
            retry_after = timedelta(milliseconds=float(after_ms)) if after_ms else None
            raise TransientStoreError(message, retry_after=retry_after) from exc
        raise StoreError(message) from exc
    except (ServiceRequestError, ServiceResponseError) as exc:
        raise TransientStoreError(f"{what}: no answer from Cosmos DB: {exc}") from exc


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
