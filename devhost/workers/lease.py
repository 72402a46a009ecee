"""Keep a lease alive while long work runs (activity leases, Service Bus message locks)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

    @contextmanager
    def holding(self, renew: Callable[[], object], lease: timedelta) -> Iterator[None]:
        """Call ``renew`` every third of ``lease`` while the block runs (its errors are logged)."""
        period = lease.total_seconds() / 3
        key = next(self._next_key)
        with self._due:
            self._leases[key] = (time.monotonic() + period, period, renew)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="lease-renewal",
                                                daemon=True)
                self._thread.start()
            self._due.notify()
        try:
            yield
        finally:
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
                    self._due.wait(None if earliest is None else earliest - now)
                    continue
            for _, _, renew in due:
                try:
                    renew()
                except Exception:  # noqa: BLE001
                    log.warning("lease renewal failed", exc_info=True)


_RENEWER = SharedRenewer()
"""The process's one renewal thread (started at its first lease)."""


@contextmanager
def renewing(renew: Callable[[], object], lease: timedelta) -> Iterator[None]:
    """Call ``renew`` every third of ``lease`` while the block runs, on the process's renewer.

    ``renew``'s exceptions are logged, not raised: a lost lease is detected where the work is
    settled.
    """
    with _RENEWER.holding(renew, lease):
        yield
