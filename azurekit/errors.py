"""The retry flag every error root of the project carries (STYLE 8, 15).

``orders.errors.OrderServiceError`` (the app) and ``devhost.failures.errors.LocalHostError`` (the
local host) both derive from :class:`RetryFlagError`, so an adapter over the local host
carries a failure's retry decision over unchanged. Retry or not is the flag, never the
type name or the message text.
"""

from __future__ import annotations

from datetime import timedelta


class RetryFlagError(Exception):
    """An error that says whether repeating the same call can help.

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
