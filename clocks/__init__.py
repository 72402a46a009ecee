"""Time sources, injectable so durable timers, leases and deadlines are tested without sleeping.

The local host (task hub, timers, queue locks, timer triggers) and the app (deadlines,
circuit breakers) ask a :class:`Clock` for the time instead of calling
:func:`datetime.now`. Production runs use
:class:`SystemClock`; tests pass a :class:`ManualClock` and move it with
:meth:`ManualClock.advance`.

A host that runs the app in its own process (the local host) hands the app its clock and
its way of waiting with :func:`hand_over`; the app's composition root reads them with
:func:`handed_over`. So the app never imports the host, and a test's ManualClock drives
both.
"""

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
        """Return the current time.

        Returns
        -------
        datetime
            Timezone-aware UTC time.
        """
        ...


class SystemClock:
    """The machine's clock, in UTC."""

    def now(self) -> datetime:
        """Return the machine's current UTC time.

        Returns
        -------
        datetime
            ``datetime.now(UTC)``.
        """
        return datetime.now(UTC)


class OffsetClock:
    """Another clock moved by a fixed ``offset``: a machine whose clock is off (skew tests)."""

    def __init__(self, base: Clock, offset: timedelta) -> None:
        self._base, self.offset = base, offset

    def now(self) -> datetime:
        """Return the base clock's time plus the offset."""
        return self._base.now() + self.offset


class ManualClock:
    """A clock that only moves when told to; safe to share between threads.

    Parameters
    ----------
    start : datetime, optional
        Initial time, timezone-aware. Defaults to 2030-01-01T00:00:00Z so that test output
        is reproducible.

    Raises
    ------
    ValueError
        If ``start`` is naive (has no timezone).
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2030, 1, 1, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("start: must be timezone-aware (UTC)")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """Return the current manual time.

        Returns
        -------
        datetime
            The time set at construction plus every :meth:`advance` so far.
        """
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock forward.

        Parameters
        ----------
        delta : timedelta
            How far to move; must not be negative.

        Returns
        -------
        datetime
            The new current time.

        Raises
        ------
        ValueError
            If ``delta`` is negative (time never goes backwards).
        """
        if delta < timedelta(0):
            raise ValueError("delta: must not be negative")
        with self._lock:
            self._now += delta
            return self._now

    def set(self, when: datetime) -> None:
        """Move the clock forward to ``when``.

        Parameters
        ----------
        when : datetime
            Timezone-aware target time, not earlier than the current time.

        Raises
        ------
        ValueError
            If ``when`` is naive or earlier than the current time.
        """
        if when.tzinfo is None:
            raise ValueError("when: must be timezone-aware (UTC)")
        with self._lock:
            if when < self._now:
                raise ValueError("when: must not be earlier than the current time")
            self._now = when.astimezone(UTC)


@dataclass(frozen=True)
class HostTime:
    """The time a host gives the app it runs.

    Attributes
    ----------
    clock : Clock
        The host's clock (a ManualClock in tests).
    sleep : callable of float to None
        Waits that many seconds by the host's clock (a ManualClock is advanced instead).
    """

    clock: Clock
    sleep: Callable[[float], None] = time.sleep


_handed_over: HostTime | None = None


def hand_over(host_time: HostTime | None) -> None:
    """Make ``host_time`` the time of the app in this process (None: take it back).

    Parameters
    ----------
    host_time : HostTime or None
        What :func:`handed_over` returns from now on; the last call wins.
    """
    global _handed_over
    _handed_over = host_time


def handed_over() -> HostTime | None:
    """Return the time a host handed over in this process, or None when none did."""
    return _handed_over
