"""The retry flag every error root of the project carries; see docs/fidelity.md, "Rules shared"."""

from __future__ import annotations

from datetime import timedelta


class RetryFlagError(Exception):
    """An error that says whether repeating the same call unchanged can help.

    ``retryable`` overrides the class's default; ``retry_after`` is the suggested wait.

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
