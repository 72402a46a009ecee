"""The root of the local host's errors, with the flag the order service's errors carry.

The local host is never deployed, so :mod:`orders` cannot import it and has its own root
(``orders.errors.OrderServiceError``); this one has the same two attributes so that an
adapter over the local host (``orders.messaging.local``) carries the decision over
unchanged. Retry or not is the flag, never the type name or the message text (STYLE 15).
"""

from __future__ import annotations

from datetime import timedelta


class LocalHostError(Exception):
    """Root of the errors the local host raises to code using it (queues, task hub).

    Parameters
    ----------
    message : str
        What failed and what to do about it.
    retryable : bool, optional
        Overrides the class's default (see below) for this one error.
    retry_after : timedelta, optional
        How long to wait before retrying; only for a retryable error.

    Attributes
    ----------
    retryable : bool
        True if the same call may succeed later unchanged. False: permanent.
    retry_after : timedelta or None
        The suggested wait before retrying, if known.

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
