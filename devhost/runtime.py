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
from devhost.servicebus import open_engine
from devhost.triggers.servicebus import ServiceBusTriggerPoller
from devhost.triggers.timer import TimerTriggerPoller

DATA_DIR_SETTING = "DEVHOST_DATA_DIR"
"""Environment variable the host sets to its data folder before importing the app."""

_current: LocalHost | None = None


def current() -> LocalHost | None:
    """Return the host built last in this process, or None when not under the local host."""
    return _current


def build_host(app_dir: str | Path, data_dir: str | Path, *, clock: Clock | None = None,
               port: int = 0, activity_workers: int = 4,
               orchestration_lease: timedelta = timedelta(seconds=30),
               activity_lease: timedelta = timedelta(seconds=60),
               queue_batch_size: int = 16, **kwargs: Any) -> LocalHost:
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
    queue_batch_size : int
        Messages received per Service Bus poll.
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
    host.pollers.extend(
        ServiceBusTriggerPoller(f, host.engine, owner, host.client_binding,
                                batch_size=queue_batch_size)
        for f in host.index.service_bus)
    if host.index.timers:
        host.pollers.append(TimerTriggerPoller(host.index.timers, host.taskhub, owner,
                                               host.client_binding))
    return host
