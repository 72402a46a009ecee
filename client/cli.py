"""Command line of a client application: submit orders, then watch their status (S8).

``submit`` sends one SubmitOrder per valid order to ``orders-<clientId>`` (the queue is
the client's identity, X10); ``watch`` reads its reply queue until the expected orders are
answered. Options are checked here; the work is in :mod:`client.submit` and
:mod:`client.watch`. Usage: docs/client.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from client import jsonl, tpch
from client.rejects import InvalidOrder
from client.submit import MAX_RESEND, reply_queue_for, submit_orders, submit_queue_for
from client.watch import PeekingReceiver, WatchProgress, WatchResult, watch
from devhost.run.plain_help import plain_help
from orders.messaging import MessagingError, OutgoingMessage, create_sender
from orders.models import ClientOrder, format_utc

if TYPE_CHECKING:
    from client.receivers import AzureReplyReceiver, LocalReplyReceiver

app = typer.Typer(help="Client application: submit orders and watch their status.",
                  no_args_is_help=True, add_completion=False,
                  rich_markup_mode=None)  # plain help: rich cuts long option names at 80 columns
console = Console()


class Source(StrEnum):
    """Where ``submit`` reads orders from."""

    TPCH = "tpch"
    JSONL = "jsonl"


class Backend(StrEnum):
    """Which Service Bus to talk to."""

    LOCAL = "local"
    SERVICEBUS = "servicebus"


CLIENT_ID = typer.Option(..., "--client-id",
                         help="Client id; submit queue orders-<id>, reply queue replies-<id>.")
EXIT_DROPPED_INVALID = 3
"""Exit code of ``submit`` when it dropped an order as invalid before sending it."""

DATA_DIR = typer.Option(Path(".data"), "--data-dir", help="Local host data folder.")
BACKEND = typer.Option(Backend.LOCAL, "--backend", help="local (SQLite) or servicebus (Azure).")
NAMESPACE = typer.Option(None, "--namespace",
                         help="Azure: <ns>.servicebus.windows.net (identity-based access).")


@app.command()
def submit(
    client_id: str = CLIENT_ID,
    source: Source = typer.Option(Source.TPCH, "--source", help="tpch or jsonl."),
    scale_factor: float = typer.Option(0.01, "--scale-factor", min=0.0001,
                                       help="TPC-H scale factor (0.01 = 15,000 orders)."),
    file: Path | None = typer.Option(None, "--file", help="JSON-lines file (--source jsonl)."),
    limit: int | None = typer.Option(None, "--limit", min=0,
                                     help="Read at most the first N orders (valid or not)."),
    data_dir: Path = DATA_DIR,
    backend: Backend = BACKEND,
    namespace: str | None = NAMESPACE,
    show_invalid: int = typer.Option(20, "--show-invalid", min=0,
                                     help="Print the reasons of at most N invalid orders."),
    resend: int = typer.Option(0, "--resend", min=0, max=MAX_RESEND,
                               help="N-th resend of orders told 'Rejected' (admission "
                                    "control): MessageId ends ':r<N>', so the queue's "
                                    "duplicate detection lets it through."),
) -> None:
    """Send one SubmitOrder per valid order to the client's own queue ``orders-<id>``.

    MessageId = ``<OrderID>:<content hash>``: a resend of the same order is dropped by
    duplicate detection, a changed one is refused by submission as a conflict (S1).
    After "Rejected", send the orders again with ``--resend 1`` (then 2, ...): the counter
    gives the resend a MessageId of its own (:mod:`client.submit`). Exits with
    :data:`EXIT_DROPPED_INVALID` if it dropped any order as invalid (the valid ones are sent).
    """
    _check_data_dir(backend, data_dir)
    reply_to = _reply_queue(client_id)
    queue = _submit_queue(client_id)
    invalid: list[InvalidOrder] = []
    orders = _orders(source, scale_factor, file, limit, data_dir, client_id, reply_to,
                     invalid.append)
    try:
        sender = create_sender(backend.value, fully_qualified_namespace=namespace,
                               data_dir=data_dir)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--namespace / --data-dir") from None
    try:
        with console.status("sending orders") as status:
            sent = submit_orders(sender, orders, client_id=client_id, reply_to=reply_to,
                                 queue=queue, resend=resend,
                                 on_sent=lambda n: status.update(f"sent {n} orders"))
    except MessagingError as exc:
        console.print(f"[red]sending failed:[/red] {exc}")
        raise typer.Exit(1) from None
    finally:
        sender.close()
    console.print(f"sent [bold]{sent}[/bold] order{'' if sent == 1 else 's'} to '{queue}' "
                  f"(replies to '{reply_to}'; "
                  "an order sent before unchanged is dropped by duplicate detection); "
                  f"dropped [bold]{len(invalid)}[/bold] as invalid")
    for item in invalid[:show_invalid]:
        console.print(f"  [yellow]invalid[/yellow] {escape(str(item))}", highlight=False)
    if len(invalid) > show_invalid:
        console.print(f"  ... and {len(invalid) - show_invalid} more")
    if invalid:  # a script must not take a partly sent file for a sent one
        raise typer.Exit(EXIT_DROPPED_INVALID)


@app.command("send-raw")
def send_raw(
    source: str = typer.Argument(..., metavar="FILE|-",
                                 help="File holding one message body, or - for stdin."),
    client_id: str = CLIENT_ID,
    message_id: str | None = typer.Option(None, "--message-id",
                                          help="MessageId; a fresh one by default."),
    data_dir: Path = DATA_DIR,
    backend: Backend = BACKEND,
    namespace: str | None = NAMESPACE,
) -> None:
    """Send one message body as is to ``orders-<id>``, to try the service's validation.

    Nothing is checked here: a body that is not a valid SubmitOrder is dead-lettered with
    the field and rule (S1) and answered ``Rejected`` with them on ``replies-<id>``;
    ``python -m devhost peek orders-<id> --dead-letter`` shows the dead letter's reason.
    """
    _check_data_dir(backend, data_dir)
    queue = _submit_queue(client_id)
    try:
        raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        body = raw.decode("utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {source}: {exc.strerror}",
                                 param_hint="FILE") from None
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"must be UTF-8 text: {exc.reason} at byte {exc.start}",
                                 param_hint="FILE") from None
    try:
        message = (OutgoingMessage(body, message_id=message_id) if message_id
                   else OutgoingMessage(body))
        sender = create_sender(backend.value, fully_qualified_namespace=namespace,
                               data_dir=data_dir)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--message-id / --namespace") from None
    try:
        sender.send(queue, message)
    except MessagingError as exc:
        console.print(f"[red]sending failed:[/red] {exc}")
        raise typer.Exit(1) from None
    finally:
        sender.close()
    console.print(f"sent {len(raw)} bytes to '{queue}' as MessageId {message.message_id}",
                  highlight=False)


@app.command("watch")
def watch_command(
    client_id: str = CLIENT_ID,
    expect: int = typer.Option(..., "--expect", min=0,
                               help="Orders to wait for: terminal, or ChangeRefused."),
    timeout_s: float = typer.Option(600.0, "--timeout-s", min=0.001, help="Give up after."),
    data_dir: Path = DATA_DIR,
    backend: Backend = BACKEND,
    namespace: str | None = NAMESPACE,
    out: Path | None = typer.Option(None, "--out",
                                    help="Write final statuses here as JSON lines."),
    peek: bool = typer.Option(False, "--peek",
                              help="Browse the reply queue without consuming it: any "
                                   "number of watchers, old statuses included."),
) -> None:
    """Read the reply queue until N orders are answered or the timeout passes.

    Without ``--peek`` the watcher is the client's one consumer: it completes each status
    message it records (a reply queue delivers each message to one receiver). Locally a
    second consuming watcher of the same queue is refused and told about ``--peek``.
    """
    _check_data_dir(backend, data_dir)
    queue = _reply_queue(client_id)
    submit_queue = _submit_queue(client_id)
    receiver = _receiver(backend, namespace, data_dir, queue)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    try:
        with _one_consumer(backend, data_dir, queue, peek):
            watched = PeekingReceiver(receiver.peek) if peek else receiver
            with Progress(*columns, console=console) as progress:
                task = progress.add_task(f"answered orders on {queue}", total=expect)

                def show(p: WatchProgress) -> None:
                    progress.update(task, completed=p.terminal)

                result = watch(watched, expect, timedelta(seconds=timeout_s),
                               on_progress=show)
        service_dead_letters = receiver.dead_letter_count(submit_queue)
    finally:
        receiver.close()
    console.print(summary_table(result, (submit_queue, service_dead_letters)))
    if out is not None:
        write_statuses(result, out)
    if result.timed_out:
        console.print(f"[red]timed out[/red] after {timeout_s} s: "
                      f"{len(result.answered)} of {expect} orders answered")
        raise typer.Exit(1)


WATCH_LOCK_FILE = "watch-{queue}.lock"
"""File of the local data folder a consuming watcher holds an exclusive lock on."""


def _check_data_dir(backend: Backend, data_dir: Path) -> None:
    """End the command in one line if the local backend's data folder does not exist.

    The local host makes it; a folder that does not exist is a mistyped ``--data-dir``,
    whose queues no host reads (``opscli`` and ``devhost`` refuse it the same way).
    """
    if backend is Backend.LOCAL and not data_dir.is_dir():
        typer.echo(f"client: --data-dir {data_dir}: no such folder (the local host's data "
                   f"folder: start the host with it first)", err=True)
        raise typer.Exit(2)


@contextmanager
def _one_consumer(backend: Backend, data_dir: Path, queue: str, peek: bool) -> Iterator[None]:
    """Hold the local consuming watcher's lock; a second one ends with one line.

    Azure cannot tell a receiver about another (competing consumers are its model), so
    there the single consumer is documented, not enforced.
    """
    if peek or backend is not Backend.LOCAL:
        yield
        return
    import fcntl

    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / WATCH_LOCK_FILE.format(queue=queue), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            typer.echo(f"client watch: another watcher is consuming '{queue}' (each status "
                       "is delivered to one receiver, so this one would see only what it "
                       "leaves); watch alongside it with --peek", err=True)
            raise typer.Exit(1) from None
        yield


def summary_table(result: WatchResult,
                  service_dead_letters: tuple[str, int | None] | None = None) -> Table:
    """Build the summary: orders per final status, then message counters.

    Parameters
    ----------
    result : WatchResult
        From :func:`client.watch.watch`.
    service_dead_letters : (str, int or None), optional
        The client's submit queue and the messages in its dead-letter subqueue: orders the
        service refused (answered Rejected, or ChangeRefused for a conflicting
        resend, S1); None when the identity may not read it.

    Returns
    -------
    rich.table.Table
        Rows ``status -> orders``, then received messages, invalid replies, the service's
        dead-lettered orders and lock-lost messages.
    """
    table = Table(title=f"{result.terminal} of {result.expect} orders terminal")
    table.add_column("status")
    table.add_column("orders", justify="right")
    for status, count in result.counts().items():
        table.add_row(status.value, str(count))
    table.add_section()
    table.add_row("messages received", str(result.received))
    if result.dead_lettered or result.invalid == 0:
        table.add_row("invalid replies dead-lettered", str(result.dead_lettered))
    if result.invalid > result.dead_lettered:
        table.add_row("invalid replies left (peek)", str(result.invalid - result.dead_lettered))
    if result.unread_rejected:
        table.add_row("Rejected, no readable OrderID", str(len(result.unread_rejected)))
    if service_dead_letters is not None:
        queue, depth = service_dead_letters
        table.add_row(f"orders dead-lettered by the service ({queue})",
                      "unknown (needs Manage)" if depth is None else str(depth))
    if result.lock_lost:
        table.add_row("lock lost (redelivered)", str(result.lock_lost))
    return table


def write_statuses(result: WatchResult, path: Path) -> None:
    """Write one JSON object per order: ``orderId``, ``status``, ``at``, ``reason``."""
    with open(path, "w", encoding="utf-8") as handle:
        for status in result.statuses.values():
            handle.write(json.dumps({"orderId": status.order_id, "status": status.status.value,
                                     "at": format_utc(status.at), "reason": status.reason}))
            handle.write("\n")


def _reply_queue(client_id: str) -> str:
    try:
        return reply_queue_for(client_id)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--client-id") from None


def _submit_queue(client_id: str) -> str:
    try:
        return submit_queue_for(client_id)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--client-id") from None


def _orders(source: Source, scale_factor: float, file: Path | None, limit: int | None,
            data_dir: Path, client_id: str, reply_to: str,
            on_invalid: Callable[[InvalidOrder], None]) -> Iterator[ClientOrder]:
    if source is Source.JSONL:
        if file is None:
            raise typer.BadParameter("required with --source jsonl", param_hint="--file")
        if not file.is_file():
            raise typer.BadParameter(f"{file} is not a file", param_hint="--file")
        return jsonl.load_jsonl(file, limit, client_id=client_id, reply_to=reply_to,
                                on_invalid=on_invalid)
    folder = data_dir / "tpch" / f"sf-{scale_factor:g}"
    with console.status(f"TPC-H scale factor {scale_factor:g} in {folder}"):
        tpch.generate(scale_factor, folder)
    return tpch.load_orders(folder, limit, on_invalid=on_invalid)


def _receiver(backend: Backend, namespace: str | None, data_dir: Path,
              queue: str) -> LocalReplyReceiver | AzureReplyReceiver:
    from client.receivers import AzureReplyReceiver, LocalReplyReceiver

    if backend is Backend.LOCAL:
        return LocalReplyReceiver.open(data_dir, queue)
    if not namespace:
        raise typer.BadParameter("required with --backend servicebus", param_hint="--namespace")
    try:
        return AzureReplyReceiver(namespace, queue)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--namespace") from None


plain_help(app)  # after every command is registered
