"""Keep a lease alive while long work runs (activity leases, Service Bus message locks)."""

from __future__ import annotations

import itertools
import logging
import math
import threading
import time
from collections.abc import Callable
from datetime import timedelta

log = logging.getLogger("devhost.lease")


class SharedRenewer:
    """Renew many leases from one thread, each every third of its duration.

    Not a thread per Service Bus message lock: this one starts at the first lease and sleeps
    until the earliest renewal. One per process: :func:`renewing`.
    """

    def __init__(self) -> None:
        self._due = threading.Condition()
        self._leases: dict[int, tuple[float, float, Callable[[], object]]] = {}
        self._next_key = itertools.count()
        self._thread: threading.Thread | None = None
        self._wakes_at = math.inf  # when the renewal thread next looks, unless notified

    def holding(self, renew: Callable[[], object], lease: timedelta) -> _Holding:
        """Call ``renew`` every third of ``lease`` while the block runs (its errors are logged)."""
        return _Holding(self, renew, lease)

    def _add(self, renew: Callable[[], object], lease: timedelta) -> int:
        period = lease.total_seconds() / 3
        key = next(self._next_key)
        with self._due:
            at = time.monotonic() + period
            self._leases[key] = (at, period, renew)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="lease-renewal",
                                                daemon=True)
                self._thread.start()
            if at < self._wakes_at:  # else the thread wakes in time for it anyway
                self._wakes_at = at
                self._due.notify()
        return key

    def _remove(self, key: int) -> None:
        with self._due:
            del self._leases[key]

    def _loop(self) -> None:
        while True:
            with self._due:
                now = time.monotonic()
                due = [(key, period, renew) for key, (at, period, renew)
                       in self._leases.items() if at <= now]
                for key, period, renew in due:
                    self._leases[key] = (now + period, period, renew)
                if not due:
                    earliest = min((at for at, _, _ in self._leases.values()), default=None)
                    self._wakes_at = math.inf if earliest is None else earliest
                    self._due.wait(None if earliest is None else earliest - now)
                    self._wakes_at = -math.inf  # looking now: a new lease need not notify
                    continue
            for _, _, renew in due:
                try:
                    renew()
                except Exception:  # noqa: BLE001
                    log.warning("lease renewal failed", exc_info=True)


class _Holding:
    """The block of :meth:`SharedRenewer.holding` (a class: cheaper than a generator's)."""

    __slots__ = ("_key", "_lease", "_renew", "_renewer")

    def __init__(self, renewer: SharedRenewer, renew: Callable[[], object],
                 lease: timedelta) -> None:
        self._renewer, self._renew, self._lease = renewer, renew, lease
        self._key = -1

    def __enter__(self) -> None:
        self._key = self._renewer._add(self._renew, self._lease)

    def __exit__(self, *exc: object) -> None:
        self._renewer._remove(self._key)


_RENEWER = SharedRenewer()
"""The process's one renewal thread (started at its first lease)."""


def renewing(renew: Callable[[], object], lease: timedelta) -> _Holding:
    """Call ``renew`` every third of ``lease`` while the block runs, on the process's renewer.

    ``renew``'s exceptions are logged, not raised: a lost lease is detected where the work is
    settled.
    """
    return _RENEWER.holding(renew, lease)
