"""The local host in one process: what the Functions host and the Durable extension do.

Work loops run in background threads (:meth:`LocalHost.start`) or in the calling thread until
idle (:meth:`LocalHost.run_until_idle`, for tests with an injected clock).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from azurekit.app_settings import HOST_URL_FILE
from devhost.app import invoke
from devhost.app.backends import backend_of
from devhost.app.host_config import HostConfig, load_host_config
from devhost.app.loader import AppIndex, AppLoadError, load_app
from devhost.entities.worker import EntityWorker
from devhost.failures.disk_gate import CHECK_EVERY_S, DiskGate
from devhost.failures.host_failures import HostRetryPolicy
from devhost.orchestration.versioning import Versioning
from devhost.run.clock import Clock, ManualClock, SystemClock
from devhost.run.worker_processes import STOP_WAIT_S
from devhost.taskhub.store import TaskHub
from devhost.triggers.dispatcher import ServiceBusDispatcher
from devhost.triggers.servicebus import ServiceBusTriggerPoller
from devhost.workers.activity_pool import ActivityPool
from devhost.workers.dispatch import DurableWorker

log = logging.getLogger("devhost")


HTTP_SERVER_OPTIONS: dict[str, Any] = {"log_level": "warning", "lifespan": "off", "http": "h11"}
"""uvicorn's settings of the Durable HTTP API: h11 whatever else is installed, since uvicorn
bounds a request's head (16 KiB) only there, as Kestrel does (32 KiB, else 431)."""


class Poller(Protocol):
    """A trigger source the host polls (Service Bus queues, timer triggers)."""

    def poll_once(self) -> int:
        """Run what is due now; return how many function invocations were made."""
        ...

    def next_due(self) -> datetime | None:
        """Return when something next becomes due, or None if nothing is queued."""
        ...


def check_client_hubs(index: AppIndex, hub_name: str) -> None:
    """Raise AppLoadError, naming both hubs, for a ``durableClient`` bound to another task hub."""
    for fdef in index.all_functions():
        if fdef.client_task_hub and fdef.client_task_hub != hub_name:
            raise AppLoadError(
                f"function '{fdef.name}': its durableClient binding names task hub "
                f"'{fdef.client_task_hub}', but the local host serves only '{hub_name}' "
                "(host.json extensions.durableTask.hubName)")


def free_port() -> int:
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HTTP_START_TIMEOUT_S = 120.0
"""Longest wait for the HTTP server to listen, unless its thread ends first (a bind failure)."""


def record_host_url(data_dir: Path, base_url: str) -> None:
    """Write ``base_url`` to ``host-url`` in ``data_dir``, so tools find the host's port.

    Written to a temporary file and renamed, as :func:`record_app_settings`; a failure to
    write it is logged, not raised (the host serves without it).
    """
    target = data_dir / HOST_URL_FILE
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(base_url + "\n", encoding="utf-8")
        temporary.replace(target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        log.warning("cannot record the host's URL in %s: %s", target, exc)


class LocalHost:
    """Run one app with its task hub and stand-ins in this process (SQLite files in ``data_dir``).

    ``port`` 0 picks a free one; ``hub_name`` defaults to host.json's; ``activity_workers`` are the
    pool's threads in :meth:`start` mode. ``episode_batch`` episodes share one transaction (group
    commit: one fsync per batch, which only fills under load). ``api_base_url``: a worker process
    of a multi-process host serves no HTTP and points durable clients there. ``host_retries``
    (L3) defaults to ``DEVHOST_HOST_RETRIES``, read after the app is loaded.
    ``partition_lease`` (default ``orchestration_lease``): in :meth:`start` mode the process
    runs the orchestrations of the partitions it leases for this long, renewed every third
    (:mod:`devhost.taskhub.partitions`); drain mode runs every partition. ``processes``: how
    many host processes start together (``devhost start --workers``), so they start balanced.
    """

    def __init__(self, app_dir: str | Path, data_dir: str | Path, *,
                 clock: Clock | None = None, port: int = 0, hub_name: str | None = None,
                 activity_workers: int = 4,
                 orchestration_lease: timedelta = timedelta(seconds=30),
                 activity_lease: timedelta = timedelta(seconds=60),
                 serve_http: bool = True, app: tuple[Any, AppIndex] | None = None,
                 episode_batch: int = 32,
                 api_base_url: str | None = None,
                 host_retries: HostRetryPolicy | None = None,
                 partition_lease: timedelta | None = None, processes: int = 1) -> None:
        self.app_dir = Path(app_dir)
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.clock = clock or SystemClock()
        self.port = port or free_port()
        self.base_url = api_base_url or f"http://127.0.0.1:{self.port}"
        serve_http = serve_http and api_base_url is None
        self.app, self.index = app or load_app(self.app_dir)
        self.config: HostConfig = load_host_config(self.app_dir)
        durable = self.config.durable
        self.backend = backend_of(self.config, os.environ)
        """The storage backend the app's settings select: its limits apply here."""
        self.backend.check_hub_name(hub_name or durable.hub_name)
        check_client_hubs(self.index, hub_name or durable.hub_name)
        self.taskhub = TaskHub(self.data_dir / "taskhub.sqlite", self.clock,
                               name=hub_name or durable.hub_name,
                               default_version=durable.default_version)
        self.worker = DurableWorker(self.taskhub, self.index,
                                    orchestration_lease=orchestration_lease,
                                    activity_lease=activity_lease,
                                    versioning=Versioning.from_settings(durable),
                                    host_retries=host_retries, backend=self.backend)
        self.worker.client_binding = self.client_binding
        self.activity_workers = activity_workers
        self.episode_batch = episode_batch
        self.partition_lease = partition_lease or orchestration_lease
        self.processes = processes
        self.pollers: list[Poller] = []
        if self.index.entities:
            self.pollers.append(EntityWorker(self.taskhub, self.index.entities,
                                             owner=self.worker.owner, lease=orchestration_lease,
                                             batch_size=durable.max_entity_batch))
        self.gate = DiskGate(self.data_dir)
        """Closed while the data disk is full: the loops take no work."""
        self.engine: Any = None
        """The embedded Service Bus engine, set by :func:`devhost.run.runtime.build_host`."""
        self.serve_http = serve_http
        self._stop = threading.Event()
        self._wake = threading.Event()  # trigger pollers
        self._work_ready = threading.Event()  # the work loop (see _work_loop)
        self._stop_deadline = 0.0  # monotonic time by which stop() wants the loops done
        self._threads: list[threading.Thread] = []
        self._server: Any = None
        self._binding: str | None = None
        self._own_api: Any = None  # answers this process's durable clients (in_process)
        self._dispatcher: ServiceBusDispatcher | None = None  # queue triggers, in start()
        self.state = "Default"
        """The ``ScriptHostState`` name ``/admin/host/status`` answers (see :meth:`start`)."""

    # ------------------------------------------------------------------ lifecycle
    def sleep(self, seconds: float) -> None:
        """Wait: a ManualClock is advanced instead of sleeping (drain mode stays instant)."""
        if isinstance(self.clock, ManualClock):
            self.clock.advance(timedelta(seconds=seconds))
        else:
            time.sleep(seconds)

    def start_http(self) -> None:
        """Start the HTTP server (Durable HTTP API and app HTTP triggers) in a thread."""
        if self._server is not None or not self.serve_http:
            return
        import uvicorn

        from devhost.run.http_host import build_http_app

        app = build_http_app(self)
        self._answer_own_clients(app)
        # The functions are indexed (ScriptHostState.Initialized) before the server listens,
        # so the first status answer is never the constructor's Default.
        if self.state == "Default":
            self.state = "Initialized"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, **HTTP_SERVER_OPTIONS)
        self._server = uvicorn.Server(config)
        thread = threading.Thread(target=self._server.run, name="devhost-http", daemon=True)
        thread.start()
        self._threads.append(thread)
        # A bind failure ends the server thread at once; the deadline is only a backstop, long
        # enough that a process paused or starved for seconds at start-up still comes up.
        deadline = time.monotonic() + HTTP_START_TIMEOUT_S
        while not self._server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"HTTP server did not start on {self.base_url}")
            time.sleep(0.01)
        record_host_url(self.data_dir, self.base_url)

    def start(self, *, running: bool = True) -> None:
        """Start the HTTP server and the background work loops.

        ``running`` False leaves :attr:`state` ``Initialized`` until :meth:`mark_running`:
        ``devhost start`` says ``Running`` only once its worker processes serve too.
        """
        self.start_http()
        # Like a worker of DTFx's Azure Storage backend, one of many: it runs the orchestrations
        # of the partitions it leases; drain mode (run_until_idle) runs them all.
        self.worker.own_partitions(self.config.durable.partition_count, self.partition_lease,
                                   self.processes)
        self._spawn("devhost-work", self._work_loop)
        queue_pollers = [p for p in self.pollers if isinstance(p, ServiceBusTriggerPoller)]
        if queue_pollers:  # one thread for every queue-triggered function's slots
            self._dispatcher = ServiceBusDispatcher(queue_pollers, self.clock)
            self._spawn("devhost-servicebus", self._dispatch_loop, self._dispatcher)
        for n, poller in enumerate(p for p in self.pollers if p not in queue_pollers):
            self._spawn(f"devhost-poller-{n}", self._poller_loop, poller)
        if running:
            self.mark_running()

    def mark_running(self) -> None:
        """Say ``Running``: every process of the host serves (``ScriptHostState.Running``)."""
        if self.state not in ("Stopping", "Stopped"):
            self.state = "Running"

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        def run() -> None:
            try:
                target(*args)
            except BaseException:  # threading ignores SystemExit silently; say it stopped
                log.critical("host thread %s stopped by an unexpected error; this process "
                             "no longer runs that loop", name, exc_info=True)
                raise

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Stop loops and HTTP, letting work finish within ``timeout_s`` (then leases expire)."""
        deadline = time.monotonic() + timeout_s
        self._stop_deadline = deadline
        self.state = "Stopping"
        self._stop.set()
        self.wake()
        if self._server is not None:
            self._server.should_exit = True
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._threads.clear()
        self._server = None
        if self._own_api is not None:
            from devhost.http_api import in_process

            in_process.unregister(self._own_api)
            self._own_api = None
        self.state = "Stopped"
        invoke.close_sdk_session()

    def wake(self) -> None:
        """Tell idle work loops that new work may be queued."""
        self._wake.set()
        self._work_ready.set()
        if self._dispatcher is not None:
            self._dispatcher.wake()

    def __enter__(self) -> LocalHost:
        self.start_http()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer_own_clients(self, app: Any = None) -> None:
        """Have the durable clients of this process call this task hub directly (no HTTP).

        ``app``: the served API app; without one (a worker process serves no HTTP) an API-only
        app over this process's task hub answers (:mod:`devhost.http_api.in_process`).
        """
        from devhost.http_api import in_process
        from devhost.run.http_host import build_http_app

        if self._own_api is not None:
            in_process.unregister(self._own_api)
        api = in_process.InProcessApi(app or build_http_app(self, with_functions=False),
                                      self.base_url)
        in_process.register(api)
        self._own_api = api

    def client_binding(self) -> str:
        """Return the ``durableClient`` binding JSON, as the Functions host passes it.

        Its clients' calls are answered in this process by this task hub (no HTTP); the
        Durable HTTP API stays served for outside callers.
        """
        self.start_http()
        if self._own_api is None:
            self._answer_own_clients()
        if self._binding is None:  # the same for every call: hub and URL are fixed
            from devhost.http_api import client_binding_json

            self._binding = client_binding_json(self.taskhub.name, self.base_url)
        return self._binding

    # ------------------------------------------------------------------ loops
    def _idle(self, delay: float) -> float:
        self._wake.wait(delay)
        self._wake.clear()
        return min(delay * 2, 0.05)

    def _work_loop(self) -> None:
        # The process's single task hub writer: each round commits the last episodes,
        # records finished activities and claims new work in one transaction, then runs
        # the claimed episodes here and hands the claimed activities to the pool.
        pool = ActivityPool(self.worker.run_activity, self.activity_workers,
                            on_finished=self._work_ready.set)
        pending: list[Any] = []
        delay = 0.001
        while not self._stop.is_set():
            if not self.gate.is_open():  # the disk is full: finished work waits in the pool
                self._stop.wait(CHECK_EVERY_S)
                continue
            self._work_ready.clear()
            finished = pool.take_finished()
            try:
                finished += self.worker.activities_failed_in_host(pool.take_failed())
            except Exception as exc:  # noqa: BLE001 - their leases expire; they run again
                self._log_failure(exc, "recording activities that failed in the host failed")
            try:
                pending, claimed = self.worker.run_round(pending, finished,
                                                         self.episode_batch, pool.room())
            except Exception as exc:  # noqa: BLE001 - nothing of the round was written
                # Its episodes and finished activities run again once their leases
                # expire (activities are idempotent, X7).
                self._log_failure(exc, "work round failed")
                pending, claimed = [], []
            pool.submit(claimed)
            try:
                pool.renew_if_due(self.taskhub, self.worker.activity_lease)
            except Exception as exc:  # noqa: BLE001 - retried next round, within the lease
                self._log_failure(exc, "activity lease renewal failed")
            if pending or claimed or finished:
                delay = 0.001
                continue
            # A runner finishing, or wake(), ends the wait at once.
            self._work_ready.wait(delay)
            delay = min(delay * 2, 0.05)
        # Stopping: activities not started yet go back to the queue; running ones get
        # until the stop deadline; what finished is recorded with the last episodes; then the
        # partitions are released, so another process takes them over without waiting.
        unstarted = pool.shutdown(max(0.0, self._stop_deadline - time.monotonic() - 0.5))
        try:
            self.worker.run_round(pending, pool.take_finished(), 0, 0)
            self.taskhub.release_activities(unstarted)
            self.worker.release_partitions()
        except Exception:  # noqa: BLE001 - the leases expire; nothing is lost
            log.exception("final work round failed")

    def _log_failure(self, exc: Exception, what: str) -> None:
        """Log a loop's failure with its traceback, unless it closed the disk gate."""
        if not self.gate.saw(exc):
            log.error(what, exc_info=exc)

    def _dispatch_loop(self, dispatcher: ServiceBusDispatcher) -> None:
        # Until stop(); then the messages in hand get until the stop deadline to finish.
        dispatcher.run(self._stop, lambda: self._stop_deadline - 0.25, self.gate,
                       self._log_failure)

    def _poller_loop(self, poller: Poller) -> None:
        # A poller that can be woken (a queue's, by a send of any process: sqlitebus's
        # doorbell) waits on that; the growing delay stays the bound, for what no send
        # announces (a schedule or a lock running out, a dropped ring, no doorbell).
        idle_wait = getattr(poller, "idle_wait", None)
        delay = 0.001
        while not self._stop.is_set():
            if not self.gate.is_open():
                self._stop.wait(CHECK_EVERY_S)
                continue
            try:
                worked = poller.poll_once()
            except Exception as exc:  # noqa: BLE001
                self._log_failure(exc, "trigger poller failed")
                worked = 0
            if worked:
                delay = 0.001
            elif idle_wait is not None:
                idle_wait(delay)
                delay = min(delay * 2, 0.05)
            else:
                delay = self._idle(delay)

    # ------------------------------------------------------------------ drain mode
    def run_until_idle(self, *, advance_clock: bool = False, max_steps: int = 1_000_000,
                       until: datetime | None = None) -> int:
        """Run all due work in this thread until none is left; return the steps run.

        ``advance_clock`` (ManualClock only) moves the clock to the next timer, message or lease
        expiry, never past ``until``; schedules alone do not. Past ``max_steps``: RuntimeError.
        """
        steps = 0
        while steps < max_steps:
            worked = 0
            while n := self.worker.run_episodes(self.episode_batch):
                worked += n
            items = self.worker.claim_activities(64)
            if items:
                self.worker.execute_activities(items)
                worked += len(items)
            for poller in self.pollers:
                worked += poller.poll_once()
            steps += worked
            if worked:
                continue
            if not (advance_clock and isinstance(self.clock, ManualClock)):
                return steps
            # Schedules (timer triggers) always have a next occurrence, so they only drive
            # the clock when the drain is bounded by `until`.
            sources = [p for p in self.pollers
                       if until is not None or not getattr(p, "is_schedule", False)]
            due = [d for d in [self.taskhub.next_due(), *(p.next_due() for p in sources)]
                   if d is not None]
            if not due:
                return steps
            target = min(due)
            if until is not None and target > until:
                if self.clock.now() < until:
                    self.clock.set(until)
                    continue
                return steps
            if target <= self.clock.now():
                return steps  # due, yet nothing could be claimed: never spin on it
            self.clock.set(target)
        raise RuntimeError(f"drain did not reach idle within {max_steps} steps")
