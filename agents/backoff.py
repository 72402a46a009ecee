"""When to retry a transient fault: backoff, ``Retry-After`` and the deadline (A1, A5)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import tenacity

from clocks import Clock
from durable_http import parse_retry_after

__all__ = ["BackoffPolicy", "StopAtDeadline", "WaitRetryAfterOr", "parse_retry_after"]


@dataclass(frozen=True)
class BackoffPolicy:
    """Exponential backoff with jitter between retries of transient faults.

    Retry ``n`` (1-based) waits ``min(initial * exp_base ** (n - 1) + uniform(0, jitter),
    maximum)``; ``initial`` is positive, ``maximum`` at least ``initial``, ``exp_base`` at
    least 1 and ``jitter`` not negative. A ``Retry-After`` header replaces the wait.

    Raises
    ------
    ValueError
        If a value is out of range; the message names the field.
    """

    initial: timedelta = timedelta(milliseconds=500)
    maximum: timedelta = timedelta(seconds=30)
    exp_base: float = 2.0
    jitter: timedelta = timedelta(milliseconds=500)

    def __post_init__(self) -> None:
        if self.initial <= timedelta(0):
            raise ValueError("initial: must be a positive timedelta")
        if self.maximum < self.initial:
            raise ValueError("maximum: must not be shorter than initial")
        if self.exp_base < 1:
            raise ValueError("exp_base: must be at least 1")
        if self.jitter < timedelta(0):
            raise ValueError("jitter: must not be negative")

    def wait(self) -> tenacity.wait.wait_base:
        """Return the equivalent tenacity wait strategy (seconds)."""
        return tenacity.wait_exponential_jitter(
            multiplier=self.initial.total_seconds(),
            exp_base=self.exp_base,
            max=self.maximum.total_seconds(),
            jitter=self.jitter.total_seconds(),
        )


class WaitRetryAfterOr(tenacity.wait.wait_base):
    """Wait exactly the failed try's ``retry_after`` (a timedelta) if any, else ``fallback``."""

    def __init__(self, fallback: tenacity.wait.wait_base) -> None:
        self._fallback = fallback

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        """Return the seconds to wait before the next try."""
        assert retry_state.outcome is not None
        error = retry_state.outcome.exception()
        retry_after = getattr(error, "retry_after", None)
        if isinstance(retry_after, timedelta):
            return retry_after.total_seconds()
        return self._fallback(retry_state)


class StopAtDeadline(tenacity.stop.stop_base):
    """Stop when the next try would start at or after the deadline."""

    def __init__(self, deadline: datetime, clock: Clock) -> None:
        self._deadline = deadline
        self._clock = clock

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        """Tell whether the next try would start at or after the deadline."""
        next_start = self._clock.now() + timedelta(seconds=retry_state.upcoming_sleep)
        return next_start >= self._deadline
