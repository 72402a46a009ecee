"""Assemble a complete local host: durable core, HTTP API, timer and queue triggers.

:func:`build_host` (``start`` and tests) also makes it this process's current host and hands
the app its clock and sleep with :func:`clocks.hand_over`, so the app never imports the host.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import clocks
from azurekit.app_settings import APP_SETTINGS_FILE
from devhost.app.host_config import load_host_config
from devhost.app.load_errors import AppLoadError
from devhost.app.loader import load_local_settings
from devhost.run.clock import Clock
from devhost.run.host import LocalHost
from devhost.triggers.queue_catalog import app_queue_catalog
from devhost.triggers.servicebus import ServiceBusTriggerPoller
from devhost.triggers.timer import TimerTriggerPoller, singleton_lock_period
from sqlitebus import open_engine

CLOCK_OFFSET_SETTING = "DEVHOST_CLOCK_OFFSET_S"
"""Seconds (float, either sign) this host process's clock is off by: clock skew tests."""

DATA_DIR_SETTING = "DEVHOST_DATA_DIR"
"""Environment variable the host sets to its data folder before importing the app."""

_SECRET_PARTS = ("STORAGE", "CONNECTION_STRING", "AUTHENTICATION", "KEY", "SECRET", "PASSWORD")

_current: LocalHost | None = None

log = logging.getLogger("devhost")

MAX_QUEUE_THREADS = 4
"""Slots (messages in hand at once) per queue-triggered function at most: a poller each,
which drain mode polls one by one (the threaded host's one dispatcher feeds them all)."""


def max_concurrent_calls(app_dir: Path) -> int:
    """Return host.json's ``maxConcurrentCalls`` (default 16), at most :data:`MAX_QUEUE_THREADS`.

    Above the cap, a WARNING says so (L1: the host runs fewer messages of a queue function
    at once than Azure would; docs/fidelity.md, "Known differences that remain").
    Raises AppLoadError if host.json cannot be parsed or the value is not an integer.
    """
    calls = load_host_config(app_dir).get("extensions", "serviceBus", "maxConcurrentCalls",
                                          default=16)
    try:
        wanted = int(calls)
    except (TypeError, ValueError):
        raise AppLoadError(f"host.json: extensions.serviceBus.maxConcurrentCalls must be an "
                           f"integer, got {calls!r}") from None
    if wanted > MAX_QUEUE_THREADS:
        log.warning("host.json: extensions.serviceBus.maxConcurrentCalls is %d; the local "
                    "host runs at most %d messages of each queue-triggered function at "
                    "once, where Azure runs up to %d", wanted, MAX_QUEUE_THREADS, wanted)
    return max(1, min(wanted, MAX_QUEUE_THREADS))


def record_app_settings(app_dir: Path, data_dir: Path) -> dict[str, str]:
    """Write the values in force of ``local.settings.json``'s keys to ``app-settings.json``.

    So the operator CLI sees what the host saw, as on Azure; names that suggest a secret are
    left out; written to a temporary file and renamed, so readers never see half of it.
    """
    keys = load_local_settings(app_dir)
    values = {k: os.environ[k] for k in keys
              if k in os.environ and not any(p in k.upper() for p in _SECRET_PARTS)}
    target = data_dir / APP_SETTINGS_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(values, indent=1, sort_keys=True), encoding="utf-8")
        temporary.replace(target)
    except OSError:  # a full disk, say: leave no partial file behind
        temporary.unlink(missing_ok=True)
        raise
    return values


CLIENTS_SETTING = "ORDER_CLIENTS"
"""App setting naming the clients; Bicep creates their queues from the same ``clients``."""


def declared_clients(environ: dict[str, str] | None = None) -> list[str]:
    """Return the comma-separated ids of ORDER_CLIENTS, stripped and lower-cased as Bicep does."""
    env = os.environ if environ is None else environ
    return [c.strip().lower() for c in env.get(CLIENTS_SETTING, "").split(",") if c.strip()]


def skewed_clock(environ: Mapping[str, str]) -> Clock | None:
    """Return the system clock moved by :data:`CLOCK_OFFSET_SETTING` (None if unset).

    Raises AppLoadError if the setting is not a finite number of seconds.
    """
    text = environ.get(CLOCK_OFFSET_SETTING, "").strip()
    if not text:
        return None
    try:
        offset_s = float(text)
    except ValueError:
        raise AppLoadError(f"{CLOCK_OFFSET_SETTING}: must be a number of seconds, "
                           f"got {text!r}") from None
    if not math.isfinite(offset_s):
        raise AppLoadError(f"{CLOCK_OFFSET_SETTING}: must be finite, got {text!r}")
    return clocks.OffsetClock(clocks.SystemClock(), timedelta(seconds=offset_s))


def current() -> LocalHost | None:
    """Return the host built last in this process, or None when not under the local host."""
    return _current


def build_host(app_dir: str | Path, data_dir: str | Path, *, clock: Clock | None = None,
               port: int = 0, activity_workers: int = 4,
               orchestration_lease: timedelta = timedelta(seconds=30),
               activity_lease: timedelta = timedelta(seconds=60),
               queue_concurrency: int | None = None, **kwargs: Any) -> LocalHost:
    """Build a host, not started, with every trigger source of the app wired in.

    ``queue_concurrency``: messages of one queue-triggered function in hand at once (its slots:
    a poller each, fed by the host's one dispatcher under :meth:`LocalHost.start`), default
    :func:`max_concurrent_calls`; ``kwargs`` go to :class:`LocalHost`.
    """
    global _current
    clock = clock or skewed_clock(os.environ)
    data_dir = Path(data_dir).resolve()
    os.environ[DATA_DIR_SETTING] = str(data_dir)
    host = LocalHost(app_dir, data_dir, clock=clock, port=port,
                     activity_workers=activity_workers,
                     orchestration_lease=orchestration_lease, activity_lease=activity_lease,
                     **kwargs)
    _current = host
    clocks.hand_over(clocks.HostTime(host.clock, host.sleep))
    record_app_settings(Path(app_dir).resolve(), data_dir)
    catalog, from_file = app_queue_catalog(
        Path(app_dir), (f.trigger["queueName"] for f in host.index.service_bus
                        if "queueName" in f.trigger))
    host.engine = open_engine(data_dir, catalog=catalog, clock=host.clock)
    if from_file:  # only the clients a deployment would create queues for have them (L1)
        host.engine.declare_clients(declared_clients())
    owner = host.worker.owner
    concurrency = queue_concurrency or max_concurrent_calls(Path(app_dir))
    host.pollers.extend(
        ServiceBusTriggerPoller(f, host.engine, owner, host.client_binding, batch_size=1,
                                gate=host.gate)
        for f in host.index.service_bus for _ in range(concurrency))
    if host.index.timers:
        host.pollers.append(TimerTriggerPoller(host.index.timers, host.taskhub, owner,
                                               host.client_binding,
                                               singleton_lock_period(app_dir)))
    return host
