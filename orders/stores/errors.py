"""The errors every store adapter raises, whatever the backend (one hierarchy, STYLE 8).

Callers (scheduler, supervisor) branch on these, never on ``sqlite3`` or
``azure.cosmos`` exceptions, so workflow code stays free of infrastructure. Each adapter
maps its backend's errors here once, by code, never by message text (STYLE 15): SQLite by
``sqlite_errorcode`` (:mod:`orders.stores._sqlite`), Cosmos DB by HTTP status and
sub-status (:func:`orders.stores._cosmos.translated`). Whether retrying the same call can
help is :attr:`~orders.errors.OrderServiceError.retryable`; only
:class:`TransientStoreError` is.
"""

from __future__ import annotations

from orders.errors import OrderServiceError


class StoreError(OrderServiceError):
    """Root of all store errors; permanent unless raised as :class:`TransientStoreError`.

    Also raised as is for a backend failure no subclass names (a SQLite file that cannot
    be opened, a Cosmos DB 400 or 403): retrying the same call cannot help.
    """


class ConflictError(StoreError):
    """Create-if-absent found different data under the same OrderID (SPEC S1, X5).

    Permanent: the stored record is kept unchanged; the submission is to be dead-lettered
    and an operator notified.
    """


class PreconditionFailedError(StoreError):
    """A conditional write found another ETag: someone else wrote first (SPEC S3, S4, V4).

    Not retryable as is: re-read the record and decide again (it may no longer be yours).
    """


class NotFoundError(StoreError):
    """A conditional write targeted a record that does not exist; permanent."""


class TransientStoreError(StoreError):
    """The backend is busy or unavailable (Cosmos DB 408/429/449/503, SQLite busy); retryable.

    Parameters
    ----------
    message : str
        What failed.
    retry_after : timedelta or None
        The backend's suggested wait before retrying, if it gave one (Cosmos DB's
        ``x-ms-retry-after-ms``).
    """

    retryable = True
