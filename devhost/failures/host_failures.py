"""Failures of the host itself: retried a bounded number of times, then ended (SPEC L3).

An episode, an activity or a trigger invocation can fail because of the local host rather
than the app: a bug in the host, an SDK answer it cannot read, a commit it cannot write.
Retrying such work at once and forever is a busy loop that Azure never shows, so the host
retries it ``DEVHOST_HOST_RETRIES`` times (default 3) with a growing pause, and then ends
it the way Azure ends work that keeps failing:

- an orchestration instance: Failed, its output ``Orchestrator function '<name>' failed:
  <the host's error text>``, its parent told as for any failed sub-orchestration, and a log
  line at ERROR naming the instance;
- an activity: TaskFailed with the host's error text (the orchestrator sees an activity
  failure it can catch, as for any other), logged at ERROR;
- a Service Bus message: dead-lettered with reason :data:`HOST_ERROR_REASON` and the host's
  error text as description (its delivery count counts the attempts);
- a timer occurrence: never retried (Azure does not retry a failed occurrence); logged at
  ERROR.

The count is kept in the task hub (table ``host_failures``), so it holds across threads
and processes, and it is cleared when the work next succeeds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

HOST_RETRIES_SETTING = "DEVHOST_HOST_RETRIES"
"""Environment variable (or ``local.settings.json`` value) with the retry count."""

DEFAULT_HOST_RETRIES = 3
"""Retries after the first failed attempt when the setting is absent."""

HOST_ERROR_REASON = "LocalHostError"
"""``DeadLetterReason`` of a message the host itself could not deliver to its function."""


@dataclass(frozen=True)
class HostRetryPolicy:
    """How often, and how far apart, work that failed in the host is tried again.

    Parameters
    ----------
    retries : int
        Retries after the first attempt (0: end the work at its first host failure).
    first_backoff : timedelta
        Pause before the first retry; it doubles with each retry.
    max_backoff : timedelta
        Longest pause.

    Raises
    ------
    ValueError
        If ``retries`` is negative or a backoff is not positive.
    """

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
        """Read :data:`HOST_RETRIES_SETTING` (default :data:`DEFAULT_HOST_RETRIES`).

        Parameters
        ----------
        settings : mapping, optional
            Where to read it; defaults to the environment, into which the host loads
            ``local.settings.json`` values.

        Raises
        ------
        ValueError
            If the value is not a whole number of 0 or more; the message names the setting.
        """
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
    """Return the error text with which the host ends work it could not run.

    Parameters
    ----------
    what : str
        The work, such as ``"the episode of instance 'x'"``.
    attempts : int
        How many times it failed.
    error : str
        The last failure, ``"<ExceptionType>: <message>"``.

    Returns
    -------
    str
        ``"The local host failed <n> times running <what>; last error: <error>"``.
    """
    times = "once" if attempts == 1 else f"{attempts} times"
    return f"The local host failed {times} running {what}; last error: {error}"


def describe(exc: BaseException) -> str:
    """Return ``"<ExceptionType>: <message>"`` for a host-side exception."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
