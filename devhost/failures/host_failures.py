"""Host failures: retried a bounded number of times, then ended (L3, docs/local-host.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

HOST_RETRIES_SETTING = "DEVHOST_HOST_RETRIES"

DEFAULT_HOST_RETRIES = 3

HOST_ERROR_REASON = "LocalHostError"
"""``DeadLetterReason`` of a message the host itself could not deliver to its function."""


@dataclass(frozen=True)
class HostRetryPolicy:
    """Retries after the first attempt, pauses doubling to ``max_backoff``; bad ones: ValueError."""

    retries: int = DEFAULT_HOST_RETRIES
    first_backoff: timedelta = timedelta(seconds=1)
    max_backoff: timedelta = timedelta(seconds=30)

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"{HOST_RETRIES_SETTING}: must be 0 or more, got {self.retries}")
        if self.first_backoff <= timedelta(0) or self.max_backoff < self.first_backoff:
            raise ValueError("backoff: first_backoff must be positive and at most max_backoff")

    @classmethod
    def from_settings(cls, settings: Mapping[str, str] | None = None) -> HostRetryPolicy:
        """Read :data:`HOST_RETRIES_SETTING` (default: os.environ); a bad value is a ValueError."""
        raw = (os.environ if settings is None else settings).get(HOST_RETRIES_SETTING)
        if raw is None or not raw.strip():
            return cls()
        try:
            retries = int(raw)
        except ValueError:
            raise ValueError(f"{HOST_RETRIES_SETTING}: must be a whole number, got {raw!r}") \
                from None
        return cls(retries=retries)

    @property
    def attempts(self) -> int:
        """Attempts in all: the first one and the retries."""
        return self.retries + 1

    def gives_up(self, attempts: int) -> bool:
        """Tell whether work that failed in the host ``attempts`` times is ended now."""
        return attempts > self.retries

    def backoff(self, attempts: int) -> timedelta:
        """Return the pause after the ``attempts``-th failure (1, 2, ...)."""
        return min(self.first_backoff * 2 ** max(0, attempts - 1), self.max_backoff)


def host_error_text(what: str, attempts: int, error: str) -> str:
    """Return ``The local host failed <n> times running <what>; last error: <error>``."""
    times = "once" if attempts == 1 else f"{attempts} times"
    return f"The local host failed {times} running {what}; last error: {error}"


def describe(exc: BaseException) -> str:
    """Return ``"<ExceptionType>: <message>"`` for a host-side exception."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
