"""Assemble a complete local host: durable core, HTTP API, timer and queue triggers.

:func:`build_host` is what ``python -m devhost start`` runs and what tests use. The host it
builds is also registered as this process's *current* host, so the app's local adapters
(embedded stores, local messaging) find the data folder and the host's clock through
:func:`current` instead of reading globals of their own.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from devhost.clock import Clock
from devhost.host import LocalHost
from devhost.host_config import load_host_config
from devhost.load_errors import AppLoadError
from devhost.servicebus import open_engine
from devhost.triggers.servicebus import ServiceBusTriggerPoller
from devhost.triggers.timer import TimerTriggerPoller, singleton_lock_period

DATA_DIR_SETTING = "DEVHOST_DATA_DIR"
"""Environment variable the host sets to its data folder before importing the app."""

_current: LocalHost | None = None

MAX_QUEUE_THREADS = 4
"""Poller threads per queue at most: each idle one polls SQLite, so more cost more."""


def max_concurrent_calls(app_dir: Path) -> int:
    """Read ``extensions.serviceBus.maxConcurrentCalls`` from the app's host.json.

    Returns
    -------
    int
        That value capped at :data:`MAX_QUEUE_THREADS` (16 is the Functions default), or
        the cap when host.json does not set it.

    Raises
    ------
    AppLoadError
        If host.json cannot be parsed, or the value is not an integer.
    """
    calls = load_host_config(app_dir).get("extensions", "serviceBus", "maxConcurrentCalls",
                                          default=16)
    try:
        return max(1, min(int(calls), MAX_QUEUE_THREADS))
    except (TypeError, ValueError):
        raise AppLoadError(f"host.json: extensions.serviceBus.maxConcurrentCalls must be an "
                           f"integer, got {calls!r}") from None


def current() -> LocalHost | None:
    """Return the host built last in this process, or None when not under the local host."""
    return _current


def build_host(app_dir: str | Path, data_dir: str | Path, *, clock: Clock | None = None,
               port: int = 0, activity_workers: int = 4,
               orchestration_lease: timedelta = timedelta(seconds=30),
               activity_lease: timedelta = timedelta(seconds=60),
               queue_concurrency: int | None = None, **kwargs: Any) -> LocalHost:
    """Build a host with every trigger source of the app wired in.

    Parameters
    ----------
    app_dir, data_dir : str or Path
        App folder and data folder.
    clock : Clock, optional
        Injected time source (tests pass a ManualClock).
    port : int
        HTTP port; 0 picks a free one.
    activity_workers : int
        Activity threads.
    orchestration_lease, activity_lease : timedelta
        Lease durations.
    queue_concurrency : int, optional
        Messages of one queue handled at once by this process (one poller thread each,
        each holding one message and renewing its lock, as the Functions host does up to
        ``maxConcurrentCalls``). Defaults to host.json's
        ``extensions.serviceBus.maxConcurrentCalls``, capped at :data:`MAX_QUEUE_THREADS`.
    **kwargs
        Passed to :class:`~devhost.host.LocalHost`.

    Returns
    -------
    LocalHost
        Not started: call ``start()`` or use drain mode (``run_until_idle``).
    """
    global _current
    data_dir = Path(data_dir).resolve()
    os.environ[DATA_DIR_SETTING] = str(data_dir)
    host = LocalHost(app_dir, data_dir, clock=clock, port=port,
                     activity_workers=activity_workers,
                     orchestration_lease=orchestration_lease, activity_lease=activity_lease,
                     **kwargs)
    _current = host
    host.engine = open_engine(data_dir, clock=host.clock)
    owner = host.worker.owner
    concurrency = queue_concurrency or max_concurrent_calls(Path(app_dir))
    host.pollers.extend(
        ServiceBusTriggerPoller(f, host.engine, owner, host.client_binding, batch_size=1)
        for f in host.index.service_bus for _ in range(concurrency))
    if host.index.timers:
        host.pollers.append(TimerTriggerPoller(host.index.timers, host.taskhub, owner,
                                               host.client_binding,
                                               singleton_lock_period(app_dir)))
    return host
