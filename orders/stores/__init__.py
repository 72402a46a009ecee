"""The order database, state store and compensation log: ports, errors, adapters, factory.

Only the wiring edge calls :func:`create_stores`; the contract is :mod:`orders.stores.ports`.
"""

from orders.stores.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    TransientStoreError,
)
from orders.stores.factory import BACKENDS, Stores, create_stores, local_stores
from orders.stores.paging import iter_expired_pages
from orders.stores.ports import (
    MAX_PAGE_SIZE,
    STARTABLE_STATES,
    CompensationLog,
    Created,
    OrderStore,
    ScanPage,
    StateStore,
)

__all__ = [
    "BACKENDS",
    "MAX_PAGE_SIZE",
    "STARTABLE_STATES",
    "CompensationLog",
    "ConflictError",
    "Created",
    "NotFoundError",
    "OrderStore",
    "PreconditionFailedError",
    "ScanPage",
    "StateStore",
    "StoreError",
    "Stores",
    "TransientStoreError",
    "create_stores",
    "iter_expired_pages",
    "local_stores",
]
