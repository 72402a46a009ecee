"""The errors every store adapter raises, whatever the backend.

Each adapter maps its backend's errors here once, by code, never by message text: SQLite by
``sqlite_errorcode``, Cosmos DB by status and sub-status. Only :class:`TransientStoreError`
is retryable.
"""

from __future__ import annotations

from orders.errors import OrderServiceError


class StoreError(OrderServiceError):
    """Root of all store errors; raised as is for any other backend failure (permanent)."""


class ConflictError(StoreError):
    """Create-if-absent found other data under the OrderID (S1, X5); permanent, nothing changed."""


class PreconditionFailedError(StoreError):
    """A conditional write found another ETag (S3, S4, V4): re-read the record and decide again."""


class NotFoundError(StoreError):
    """A conditional write targeted a record that does not exist; permanent."""


class TransientStoreError(StoreError):
    """The backend is busy or unavailable (Cosmos DB 408/429/449/503, SQLite busy); retryable."""

    retryable = True
