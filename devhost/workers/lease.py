"""Keep a lease alive while long work runs (activity leases, Service Bus message locks)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

log = logging.getLogger("devhost.lease")


@contextmanager
def renewing(renew: Callable[[], object], lease: timedelta) -> Iterator[None]:
    """Call ``renew`` every third of ``lease`` while the block runs.

    Parameters
    ----------
    renew : callable
        Extends the lease; exceptions are logged, not raised (losing a lease is detected
        where the work is settled).
    lease : timedelta
        The lease duration.
    """
    done = threading.Event()

    def loop() -> None:
        while not done.wait(lease.total_seconds() / 3):
            try:
                renew()
            except Exception:  # noqa: BLE001
                log.warning("lease renewal failed", exc_info=True)

    thread = threading.Thread(target=loop, name="lease-renewal", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
