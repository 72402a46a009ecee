"""The errors every store adapter raises, whatever the backend (one hierarchy, STYLE 8).

Callers (scheduler, supervisor) branch on these, never on ``sqlite3`` or
``azure.cosmos`` exceptions, so workflow code stays free of infrastructure. Each class
says whether retrying the same call can help (:attr:`StoreError.retryable`).
"""

from __future__ import annotations

from datetime import timedelta


class StoreError(Exception):
    """Root of all store errors.

    Attributes
    ----------
    retryable : bool
        True if the same call may succeed later without any change by the caller.
    """

    retryable: bool = False


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
    """A conditional write targeted a record that does not exist."""


class TransientStoreError(StoreError):
    """The backend is busy or unavailable (Cosmos DB 408/429/449/503, SQLite busy).

    Parameters
    ----------
    message : str
        What failed.
    retry_after : timedelta or None
        The backend's suggested wait before retrying, if it gave one.
    """

    retryable = True

    def __init__(self, message: str, *, retry_after: timedelta | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
