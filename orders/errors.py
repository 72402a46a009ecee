"""The root of the order service's own errors, with the one flag that says whether to retry.

Callers decide "try again later" or "give up" by :attr:`OrderServiceError.retryable`
(and wait :attr:`OrderServiceError.retry_after` when the backend named a time), never by
an exception's type name or message text (STYLE 8, 15). Each package boundary maps the
errors of what it wraps once, by exception type or status code, into a subclass:
:mod:`orders.stores.errors` (SQLite, Cosmos DB), :mod:`orders.messaging.errors`
(Service Bus, local queues), ``scheduler.durable_client`` (the Durable Functions client).
The subclass says what happened; the flag says whether repeating the same call can help.

The local host has its own root with the same two attributes
(``devhost.errors.LocalHostError``): it is never deployed, so ``orders`` never imports it.
"""

from __future__ import annotations

from datetime import timedelta


class OrderServiceError(Exception):
    """Root of the order service's errors.

    Parameters
    ----------
    message : str
        What failed, naming the operation and what to do about it.
    retryable : bool, optional
        Overrides the class's default (see below) for this one error.
    retry_after : timedelta, optional
        The backend's suggested wait before retrying; only for a retryable error.

    Attributes
    ----------
    retryable : bool
        True if the same call may succeed later without any change by the caller
        (the backend was busy, throttled or unreachable). False: permanent; repeating the
        call unchanged fails the same way.
    retry_after : timedelta or None
        How long the backend asked the caller to wait, if it said; None otherwise.

    Raises
    ------
    ValueError
        If ``retry_after`` is negative, or given for an error that is not retryable.
    """

    retryable: bool = False
    retry_after: timedelta | None = None

    def __init__(self, message: str = "", *, retryable: bool | None = None,
                 retry_after: timedelta | None = None) -> None:
        super().__init__(message)
        if retryable is not None:
            self.retryable = retryable
        if retry_after is not None:
            if retry_after < timedelta(0):
                raise ValueError(f"retry_after: must not be negative; got {retry_after!r}")
            if not self.retryable:
                raise ValueError("retry_after: only a retryable error has a retry-after")
            self.retry_after = retry_after
