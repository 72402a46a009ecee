"""Command line of the local host: ``start`` it, and read its task hub and queues.

``status``, ``history``, ``queues`` and ``peek`` read the SQLite files directly, so they work
whether or not a host is running.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from devhost.run.plain_help import plain_help
from devhost.run.startup_heap import long_lived_startup
from devhost.run.worker_processes import (
    LOCK_HOLD_LIMIT_S,
    STOP_WAIT_S,
    WorkerProcesses,
    WorkerStartError,
    signal_ready,
    worker_argv,
)
from sqlitekit import record_holds

if TYPE_CHECKING:
    from devhost.run.host import LocalHost
    from devhost.taskhub.store import TaskHub
    from sqlitebus import ServiceBusEngine

app = typer.Typer(help="Run Azure Functions apps with Durable Functions on one machine.",
                  no_args_is_help=True, add_completion=False,
                  rich_markup_mode=None)  # plain help: rich cuts long option names at 80 columns
PIPED_WIDTH = 200
"""Columns of the tables when written to a pipe or file and ``COLUMNS`` is unset."""
console = Console(width=PIPED_WIDTH if not sys.stdout.isatty() and not os.environ.get("COLUMNS")
                  else None)

START_RETRY_S = 1.0
"""Pause between start-up attempts while the data disk is full."""

MAX_DEFAULT_WORKERS = 4
"""Processes beyond this gave nothing more: they all queue for the task hub's write lock."""

DATA_DIR = typer.Option(Path(".data"), "--data-dir", help="Folder of the SQLite files.")
LOG_LEVEL = typer.Option("info", "--log-level",
                         help="debug, info, warning or error; debug shows the full traceback "
                              "of a start-up error.")
log = logging.getLogger("devhost")


def _configure_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")


def _build_or_exit(**kwargs: Any) -> LocalHost:
    """Build the host; a start-up error ends the command with its one-line message.

    The message names the user's file, line and column (or the setting at fault); the
    traceback through the host's own modules is logged at debug level only. A full data
    disk is waited out instead (one ERROR line), as the running host waits it out. The
    host's start-up objects are frozen once built (:mod:`devhost.run.startup_heap`).
    """
    from devhost.app.load_errors import AppLoadError
    from devhost.run.runtime import build_host
    from sqlitekit import is_disk_full

    waiting = False
    while True:
        try:
            with long_lived_startup():
                return build_host(**kwargs)
        except AppLoadError as exc:
            log.debug("start-up failed", exc_info=True)
            typer.echo(f"devhost: {exc}", err=True)
            raise typer.Exit(1) from None
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            if not waiting:  # one line, then a quiet retry each second
                log.error("the data disk is full (%s: %s); starting once space returns",
                          type(exc).__name__, exc)
                waiting = True
            time.sleep(START_RETRY_S)


def default_workers() -> int:
    """Return the default number of host processes: one per CPU, capped.

    Replay is CPU work in Python, so one process uses one core; see bench/RESULTS.md.
    """
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_WORKERS))


@app.command()
def start(app_dir: Path = typer.Option(Path("."), "--app-dir",
                                       help="The app's folder: host.json, and "
                                            "function_app.py or the v1 function folders."),
          port: int = typer.Option(7071, "--port",
                                   help="HTTP port on 127.0.0.1 (0: any free one)."),
          data_dir: Path = DATA_DIR,
          activity_workers: int = typer.Option(4, "--activity-workers", min=1),
          orchestration_lease_s: float = typer.Option(30.0, "--orchestration-lease-s", min=0.1),
          activity_lease_s: float = typer.Option(60.0, "--activity-lease-s", min=0.1),
          partition_lease_s: float | None = typer.Option(
              None, "--partition-lease-s", min=0.1,
              help="How long a process's lease on a partition of the orchestrations holds "
                   "unless renewed (every third of it); a process that dies or freezes loses "
                   "its partitions to the others after this. Default: "
                   "--orchestration-lease-s."),
          workers: int | None = typer.Option(
              None, "--workers", min=1,
              help="Host processes sharing the task hub; one serves HTTP. Default: one "
                   f"per CPU, at most {MAX_DEFAULT_WORKERS}."),
          lock_hold_limit_s: float = typer.Option(
              LOCK_HOLD_LIMIT_S, "--lock-hold-limit-s", min=0.5,
              help="Kill (and replace) a worker process that holds a SQLite write lock "
                   "this long: a frozen worker then stalls the others no longer."),
          stop_wait_s: float = typer.Option(
              STOP_WAIT_S, "--stop-wait-s", min=0.0,
              help="On Ctrl-C, wait this long for running activities; those still running "
                   "keep their lease and run again once it ends."),
          log_level: str = LOG_LEVEL) -> None:
    """Start the host: HTTP API, orchestrations, entities, activities, timer and queue triggers."""
    if not 0 <= port <= 65535:
        typer.echo(f"devhost: --port {port}: a TCP port is 0 to 65535 (0: any free one)",
                   err=True)
        raise typer.Exit(2)
    workers = workers or default_workers()
    _configure_logging(log_level)
    _refuse_taken_port(port)
    own_holds = record_holds()  # in memory: only the workers' records are read (by us)
    partition_lease_s = partition_lease_s or orchestration_lease_s
    host = _build_or_exit(app_dir=app_dir, data_dir=data_dir, port=port,
                          activity_workers=activity_workers,
                          orchestration_lease=timedelta(seconds=orchestration_lease_s),
                          activity_lease=timedelta(seconds=activity_lease_s),
                          partition_lease=timedelta(seconds=partition_lease_s),
                          processes=workers)
    _say_earlier_leases(host)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        host.start(running=False)  # Running once the workers serve too (admin/host/status)
    except RuntimeError as exc:  # the port was taken between the check and the bind
        log.debug("HTTP server failed", exc_info=True)
        typer.echo(f"devhost: {exc}; is port {port} in use? Choose another with --port",
                   err=True)
        raise typer.Exit(1) from None
    workers_argv = worker_argv(str(app_dir), str(data_dir), host.base_url, activity_workers,
                               orchestration_lease_s, activity_lease_s) + [
        "--partition-lease-s", str(partition_lease_s), "--processes", str(workers),
        "--log-level", log_level, "--stop-wait-s", str(stop_wait_s)]
    children = WorkerProcesses(workers_argv, workers - 1, hold_records=True)
    try:
        ready = children.wait_ready(stop, lock_hold_limit_s=lock_hold_limit_s)
    except WorkerStartError as exc:
        children.stop(grace_s=0)
        host.stop()
        typer.echo(f"devhost: {exc}", err=True)
        raise typer.Exit(1) from None
    if ready:
        host.mark_running()
        _print_ready(host, data_dir, workers)
    while not stop.wait(0.5):
        children.end_stalled(lock_hold_limit_s)
        children.replace_exited()
    _stop_all(host, children, stop_wait_s, activity_lease_s)
    log.info("longest write-lock hold: %.3f s (workers), %.3f s (this process); "
             "--lock-hold-limit-s %.1f", children.longest_hold_s(),
             own_holds.longest_s, lock_hold_limit_s)


def _say_earlier_leases(host: LocalHost) -> None:
    """Say which activities a host stopped while they ran left leased, and until when."""
    earlier = host.taskhub.activities.leased_activities()
    if earlier:  # they wait for their lease to end, then run again
        console.print(f"devhost: {describe_activities(earlier)} of an earlier run hold their "
                      f"lease until {earlier[-1].lock_expires:%H:%M:%S} UTC and run again "
                      f"then", markup=False, highlight=False, soft_wrap=True)


def _stop_all(host: LocalHost, children: WorkerProcesses, stop_wait_s: float,
              activity_lease_s: float) -> None:
    """Stop the workers, then this process, within ``stop_wait_s``; say what was left running."""
    running = host.taskhub.activities.leased_activities()
    console.print(f"devhost: stopping: waiting up to {stop_wait_s:g} s for "
                  f"{describe_activities(running) if running else 'no running activity'}",
                  markup=False, highlight=False, soft_wrap=True)
    deadline = time.monotonic() + stop_wait_s
    # Workers first, while this process still serves the HTTP API their functions call.
    children.stop(grace_s=stop_wait_s + 5.0)
    host.stop(timeout_s=max(1.0, deadline - time.monotonic()))
    left = host.taskhub.activities.leased_activities()
    console.print("devhost: stopped" + (
        f"; left running: {describe_activities(left)}; each runs again from its start when a "
        f"host next runs, once its lease ends (at most --activity-lease-s "
        f"{activity_lease_s:.0f} s)" if left else ""), markup=False, highlight=False,
        soft_wrap=True)


def describe_activities(leased: list[Any]) -> str:
    """Return "2 activities (slow of instance abc, ...)" for leased activity work items."""
    shown = ", ".join(f"{a.name} of instance {a.instance_id}" for a in leased[:5])
    more = f", and {len(leased) - 5} more" if len(leased) > 5 else ""
    return (f"{len(leased)} running activit{'y' if len(leased) == 1 else 'ies'} "
            f"({shown}{more})")


def _refuse_taken_port(port: int) -> None:
    """End the command with one line if ``port`` on 127.0.0.1 is taken.

    The server binds as uvicorn does (``SO_REUSEADDR``, so a port in TIME_WAIT is free);
    a port taken between this check and the server's bind is reported by ``start``.
    """
    if port == 0:
        return
    import socket

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            typer.echo(f"devhost: port {port} on 127.0.0.1 is in use ({exc.strerror}); stop "
                       "what listens there or choose another port with --port", err=True)
            raise typer.Exit(1) from None


def _print_ready(host: LocalHost, data_dir: Path, workers: int) -> None:
    """Say where the host listens, its functions, and the URL of each HTTP function.

    The URLs are listed as ``func start`` lists them (``name: [GET] http://...``), so a
    page such as a dashboard is one click away.
    """
    from devhost.http_api.app_routes import trigger_methods

    console.print(f"devhost: listening on {host.base_url} (task hub {host.taskhub.name}, "
                  f"data in {data_dir}, {workers} process{'es' if workers > 1 else ''})",
                  soft_wrap=True)
    functions = sorted(f.name for f in host.index.all_functions())
    console.print(f"devhost: {len(functions)} functions: {', '.join(functions)}",
                  soft_wrap=True)
    prefix = f"/{host.config.route_prefix}" if host.config.route_prefix else ""
    for fdef in sorted(host.index.http, key=lambda f: f.trigger.get("route") or f.name):
        methods = ",".join(trigger_methods(fdef.trigger))
        route = (fdef.trigger.get("route") or fdef.name).strip("/")
        console.print(f"devhost: {fdef.name}: [{methods}] "
                      f"{host.base_url}{prefix}/{route}", soft_wrap=True, markup=False,
                      highlight=False)
    console.print("devhost: Ctrl-C stops the host", soft_wrap=True)


@app.command(hidden=True)
def worker(app_dir: Path = typer.Option(..., "--app-dir"), data_dir: Path = DATA_DIR,
           api_url: str = typer.Option(..., "--api-url"),
           activity_workers: int = typer.Option(4, "--activity-workers", min=1),
           orchestration_lease_s: float = typer.Option(30.0, "--orchestration-lease-s"),
           activity_lease_s: float = typer.Option(60.0, "--activity-lease-s"),
           partition_lease_s: float | None = typer.Option(None, "--partition-lease-s"),
           processes: int = typer.Option(1, "--processes", min=1,
                                         help="Host processes starting together."),
           ready_fd: int | None = typer.Option(None, "--ready-fd"),
           hold_record: str | None = typer.Option(None, "--hold-record",
                                                  help="Name of the shared-memory block."),
           stop_wait_s: float = typer.Option(STOP_WAIT_S, "--stop-wait-s"),
           log_level: str = LOG_LEVEL) -> None:
    """Run one extra worker process of ``start --workers N`` (no HTTP server of its own)."""
    _die_with_parent()
    parent = os.getppid()
    _configure_logging(log_level)
    if hold_record is not None:
        _record_holds_in(hold_record)
    host = _build_or_exit(app_dir=app_dir, data_dir=data_dir,
                          activity_workers=activity_workers,
                          orchestration_lease=timedelta(seconds=orchestration_lease_s),
                          activity_lease=timedelta(seconds=activity_lease_s),
                          partition_lease=timedelta(
                              seconds=partition_lease_s or orchestration_lease_s),
                          processes=processes, api_base_url=api_url)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    host.start()
    signal_ready(ready_fd)
    # Where the kernel cannot kill us with the parent (not Linux), notice being orphaned.
    while not stop.wait(1.0):
        if os.getppid() != parent:
            break
    host.stop(timeout_s=stop_wait_s)


def _record_holds_in(name: str) -> None:
    """Keep this worker's holds in its block; without it, run unsupervised rather than exit."""
    try:
        record_holds(name)
    except (OSError, ValueError) as exc:
        log.warning("cannot map the hold record %s (%s: %s); a freeze of this worker while "
                    "it holds a write lock is not ended", name, type(exc).__name__, exc)
        record_holds()


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when its parent dies.

    A SIGKILLed host takes its workers with it, so a restart starts from a clean set of
    processes.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _taskhub(data_dir: Path) -> TaskHub:
    from devhost.run.clock import SystemClock
    from devhost.taskhub.store import TaskHub

    path = data_dir / "taskhub.sqlite"
    if not path.exists():
        raise typer.BadParameter(f"no task hub at {path}", param_hint="--data-dir")
    return TaskHub(path, SystemClock())


@app.command()
def status(instance_id: str, data_dir: Path = DATA_DIR) -> None:
    """Show one instance's runtime status, input, output and custom status."""
    inst = _taskhub(data_dir).get_instance(instance_id)
    if inst is None:
        console.print(f"[red]No instance with ID '{instance_id}' found.[/red]")
        raise typer.Exit(1)
    table = Table(show_header=False)
    for key, value in [("instanceId", inst.instance_id), ("name", inst.name),
                       ("runtimeStatus", inst.runtime_status), ("input", inst.input),
                       ("output", inst.output), ("customStatus", inst.custom_status),
                       ("createdTime", inst.created_at.isoformat()),
                       ("lastUpdatedTime", inst.last_updated_at.isoformat())]:
        table.add_row(key, str(value))
    console.print(table)


@app.command()
def history(instance_id: str, data_dir: Path = DATA_DIR) -> None:
    """Show one instance's history table: event type, timestamp, name, input, result (D5)."""
    from devhost.http_api.history_view import history_table

    events = _taskhub(data_dir).get_history(instance_id)
    if not events:
        console.print(f"[red]No history for '{instance_id}'.[/red]")
        raise typer.Exit(1)
    table = Table("#", "event type", "timestamp", "name", "input", "result")
    for n, row in enumerate(history_table(events)):
        table.add_row(str(n), row["event_type"], row["timestamp"], row["name"] or "",
                      _short(row["input"]), _short(row["result"]))
    console.print(table)


def _short(value: object, width: int = 60) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= width else text[: width - 1] + "…"


APP_DIR = typer.Option(Path("."), "--app-dir",
                       help="The app's folder, whose queue catalogue names the queues.")


def _open_queues(data_dir: Path, app_dir: Path) -> ServiceBusEngine:
    """Open the data folder's queues with the app's catalogue, as ``start`` does."""
    import sqlite3

    from devhost.app.load_errors import AppLoadError
    from devhost.app.loader import load_local_settings
    from devhost.triggers.queue_catalog import app_queue_catalog
    from sqlitebus import FILE_NAME, open_engine

    made: list[str] = []  # without a catalogue file: the queues the host made
    if (data_dir / FILE_NAME).is_file():
        with sqlite3.connect(f"file:{data_dir / FILE_NAME}?mode=ro", uri=True) as conn:
            made = [row[0] for row in conn.execute("SELECT name FROM queues")]
    try:
        load_local_settings(app_dir)
        catalog, _ = app_queue_catalog(app_dir, made)
    except AppLoadError as exc:
        typer.echo(f"devhost: {exc}", err=True)
        raise typer.Exit(1) from None
    return open_engine(data_dir, catalog=catalog)


@app.command()
def queues(data_dir: Path = DATA_DIR, app_dir: Path = APP_DIR) -> None:
    """Show each Service Bus queue's active, scheduled and dead-letter message counts."""
    table = Table("queue", "active", "scheduled", "dead-letter")
    for info in _open_queues(data_dir, app_dir).list_queues():
        c = info.counts
        table.add_row(info.name, str(c.active), str(c.scheduled), str(c.dead_letter))
    console.print(table)


@app.command()
def peek(queue: str, data_dir: Path = DATA_DIR, app_dir: Path = APP_DIR,
         count: int = typer.Option(10, "--count", min=1),
         dead_letter: bool = typer.Option(False, "--dead-letter"),
         body_chars: int = typer.Option(0, "--body-chars", min=0,
                                        help="Cut bodies after N characters; 0: whole.")) -> None:
    """Show messages of a queue (or its dead-letter subqueue) without locking them.

    Each message is shown whole, one block each: sequence number, MessageId, delivery
    count and enqueued time, then for a dead-lettered one its ``DeadLetterReason`` and
    ``DeadLetterErrorDescription``, then its body (never wrapped, so it can be copied).
    """
    from sqlitebus import MessagingEntityNotFoundError

    try:
        messages = _open_queues(data_dir, app_dir).peek(queue, count, dead_letter=dead_letter)
    except MessagingEntityNotFoundError as exc:
        typer.echo(f"devhost: {exc}", err=True)
        raise typer.Exit(2) from None
    where = f"{queue}/$deadletterqueue" if dead_letter else queue
    console.print(f"{where}: {len(messages)} message{'' if len(messages) == 1 else 's'}"
                  f"{' (first ' + str(count) + ')' if len(messages) == count else ''}",
                  markup=False, highlight=False)
    for m in messages:
        lines = [f"#{m.sequence_number}  {m.message_id}  delivery {m.delivery_count}  "
                 f"enqueued {m.enqueued_time.strftime('%Y-%m-%d %H:%M:%S')} UTC"]
        if m.dead_letter_reason or m.dead_letter_error_description:
            lines.append("  dead-lettered: " + ": ".join(
                t for t in (m.dead_letter_reason, m.dead_letter_error_description) if t))
        text = m.text.rstrip("\n")
        lines.append(f"  body: {_short(text, body_chars) if body_chars else text}")
        console.print("\n".join(lines), soft_wrap=True, markup=False, highlight=False)


@app.command()
def replay(histories: Path | None = typer.Argument(
               None, help="A history JSON file (the Durable HTTP API's status with "
                          "showHistory=true&showHistoryOutput=true) or a folder of them."),
           app_dir: Path = typer.Option(Path("."), "--app-dir",
                                        help="The app's folder, whose current code replays."),
           data_dir: Path | None = typer.Option(
               None, "--data-dir", help="Replay every in-flight instance of this folder's "
                                        "task hub instead of files.")) -> None:
    """Replay recorded histories against the app's current code: exit 0 clean, 1 diverged.

    Each instance is reported on one line: the same decisions, or the first event where the
    code decides otherwise with DTFx's non-determinism text. Bad input (no app, an app that
    fails to load, a file that is not a history) is one line on stderr and exit 2.
    """
    from devhost.replay.check import run_replay
    from devhost.replay.history import HistoryFormatError

    if (histories is None) == (data_dir is None):
        typer.echo("devhost: replay: give one history file or folder, or --data-dir", err=True)
        raise typer.Exit(2)
    try:
        results = run_replay(app_dir, histories, data_dir)
    except HistoryFormatError as exc:
        typer.echo(f"devhost: replay: {exc}", err=True)
        raise typer.Exit(2) from None
    for result in results:
        console.print(result.line(), soft_wrap=True, markup=False, highlight=False)
    diverged = sum(not r.clean for r in results)
    console.print(f"devhost: replayed {len(results)} instance{'' if len(results) == 1 else 's'}"
                  f", {diverged} diverged", markup=False, highlight=False)
    raise typer.Exit(1 if diverged else 0)


def main() -> None:
    """Run the CLI."""
    app()


plain_help(app)  # after every command is registered
