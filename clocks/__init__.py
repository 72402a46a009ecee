"""Injectable UTC time sources, so timers, leases and deadlines are tested without sleeping."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """A source of timezone-aware UTC time."""

    def now(self) -> datetime:
        """Return the current timezone-aware UTC time."""
        ...


class SystemClock:
    """The machine's clock, in UTC."""

    def now(self) -> datetime:
        """Return ``datetime.now(UTC)``."""
        return datetime.now(UTC)


class OffsetClock:
    """Another clock moved by a fixed ``offset``: a machine whose clock is off (skew tests)."""

    def __init__(self, base: Clock, offset: timedelta) -> None:
        self._base, self.offset = base, offset

    def now(self) -> datetime:
        """Return the base clock's time plus the offset."""
        return self._base.now() + self.offset


class ManualClock:
    """A thread-safe clock moved only when told; ``start`` (default 2030-01-01Z) must be aware."""

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2030, 1, 1, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("start: must be timezone-aware (UTC)")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """Return the start time plus every move so far."""
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by ``delta`` and return the new time; a negative delta is a ValueError."""
        if delta < timedelta(0):
            raise ValueError("delta: must not be negative")
        with self._lock:
            self._now += delta
            return self._now

    def set(self, when: datetime) -> None:
        """Move forward to ``when``; naive or earlier than now is a ValueError."""
        if when.tzinfo is None:
            raise ValueError("when: must be timezone-aware (UTC)")
        with self._lock:
            if when < self._now:
                raise ValueError("when: must not be earlier than the current time")
            self._now = when.astimezone(UTC)


@dataclass(frozen=True)
class HostTime:
    """The clock and the ``sleep(seconds)`` a host gives the app it runs (see :func:`hand_over`)."""

    clock: Clock
    sleep: Callable[[float], None] = time.sleep


_handed_over: HostTime | None = None


def hand_over(host_time: HostTime | None) -> None:
    """Make ``host_time`` what :func:`handed_over` returns in this process (None takes it back)."""
    global _handed_over
    _handed_over = host_time


def handed_over() -> HostTime | None:
    """Return the time a host handed over in this process, or None when none did."""
    return _handed_over
