"""What the Cosmos DB adapters share: client and container set-up, documents, errors, cost.

Every document's ``id`` is its partition key value, so reads are point reads and each
conditional write touches one logical partition. With data-plane RBAC a managed identity
cannot create databases or containers, so in Azure they come from Bicep.
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
"""Partition key of the order containers: all of one order's data in one partition."""


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
    """Connect to a Cosmos DB account (None: ``DefaultAzureCredential``; a key: test server)."""
    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    return CosmosClient(endpoint, credential=credential, connection_verify=connection_verify)


def open_database(
    client: CosmosClient, database: str, *, create_if_missing: bool = False
) -> DatabaseProxy:
    """Return one database of the account, creating it if asked (local use only)."""
    if create_if_missing:
        return client.create_database_if_not_exists(id=database)
    return client.get_database_client(database)


def container(db: DatabaseProxy, name: str, *, create_if_missing: bool = False,
              partition_key_path: str = PARTITION_KEY_PATH) -> ContainerProxy:
    """Return a container on ``partition_key_path``, creating it if asked (local use)."""
    if create_if_missing:
        return db.create_container_if_not_exists(
            id=name, partition_key=PartitionKey(path=partition_key_path)
        )
    return db.get_container_client(name)


def to_document(model: BaseModel, order_key: str) -> dict[str, Any]:
    """Return the camelCase JSON document of ``model``, ``id`` = ``order_key``, no ETag field."""
    document = model.model_dump(mode="json", by_alias=True, exclude={"etag"})
    document["id"] = order_key
    return document


def from_document(document: Mapping[str, Any], *, with_etag: bool) -> dict[str, Any]:
    """Strip Cosmos DB's system properties; ``with_etag`` copies ``_etag`` into ``etag``."""
    data = {k: v for k, v in document.items() if k != "id" and not k.startswith("_")}
    if with_etag:
        data["etag"] = document["_etag"]
    return data


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Turn Cosmos DB errors into :mod:`orders.stores.errors`, by status and sub-status.

    412 PreconditionFailedError; 409 ConflictError; 404 NotFoundError, but 404/1003 (no such
    database or container) StoreError and 404/1002 (read session not available)
    TransientStoreError; 408/429/449/503 and no answer at all (azure-core
    ``ServiceRequestError``/``ServiceResponseError``) TransientStoreError, with ``retry_after``
    from ``x-ms-retry-after-ms``; anything else StoreError.
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
    """A ``response_hook`` summing ``x-ms-request-charge`` over a query's requests."""

    def __init__(self) -> None:
        self.total = 0.0
        self.requests = 0

    def __call__(self, headers: Mapping[str, Any], _result: Any) -> None:
        self.requests += 1
        self.total += float(headers.get("x-ms-request-charge", 0) or 0)



def read_document(container: ContainerProxy, item: str, partition_key: str,
                  what: str) -> dict[str, Any] | None:
    """Point-read one document; None on 404, other failures as :func:`translated`."""
    return _none_on(NotFoundError, what,
                    lambda: container.read_item(item=item, partition_key=partition_key))


def create_document(container: ContainerProxy, body: dict[str, Any],
                    what: str) -> dict[str, Any] | None:
    """Create one document; None if its ``id`` exists (409: the caller compares)."""
    return _none_on(ConflictError, what, lambda: container.create_item(body=body))


def still_there(found: T | None, what: str, noun: str) -> T:
    """Return what a read after a 409 ``found``; StoreError if it is gone."""
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
    """Base of the Cosmos DB adapters: one container of a client the caller owns."""

    def __init__(self, container: ContainerProxy) -> None:
        self._container = container

    def close(self) -> None:
        """Nothing to release: the client's connection pool belongs to the caller."""
