"""Command line of a client application: submit orders, then watch their status (SPEC S8).

Why: the "Who uses it" role of the SPEC, runnable by hand or from the demo. ``submit``
reads orders (TPC-H or JSON lines), drops invalid ones with their reasons and sends one
SubmitOrder per order to the client's own queue ``orders-<clientId>`` (the service takes the
client's identity from it, SPEC X10); ``watch`` reads the client's private reply
queue until the expected number of orders are in a terminal status. Settings arrive as
options and are checked here, at the edge; the work is done by :mod:`client.submit` and
:mod:`client.watch`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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
from client.watch import WatchProgress, WatchResult, watch
from orders.messaging import MessagingError, create_sender
from orders.models import Order, format_utc

if TYPE_CHECKING:
    from client.receivers import AzureReplyReceiver, LocalReplyReceiver

app = typer.Typer(help="Client application: submit orders and watch their status.",
                  no_args_is_help=True, add_completion=False)
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
    duplicate detection, a changed one is refused by submission as a conflict (SPEC S1).
    After "Rejected", send the orders again with ``--resend 1`` (then 2, ...): the counter
    gives the resend a MessageId of its own (:mod:`client.submit`).
    """
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
    console.print(f"sent [bold]{sent}[/bold] orders to '{queue}' (replies to '{reply_to}'; "
                  "an order sent before unchanged is dropped by duplicate detection); "
                  f"dropped [bold]{len(invalid)}[/bold] as invalid")
    for item in invalid[:show_invalid]:
        console.print(f"  [yellow]invalid[/yellow] {escape(str(item))}", highlight=False)
    if len(invalid) > show_invalid:
        console.print(f"  ... and {len(invalid) - show_invalid} more")


@app.command("watch")
def watch_command(
    client_id: str = CLIENT_ID,
    expect: int = typer.Option(..., "--expect", min=0, help="Terminal orders to wait for."),
    timeout_s: float = typer.Option(600.0, "--timeout-s", min=0.001, help="Give up after."),
    data_dir: Path = DATA_DIR,
    backend: Backend = BACKEND,
    namespace: str | None = NAMESPACE,
    out: Path | None = typer.Option(None, "--out",
                                    help="Write final statuses here as JSON lines."),
) -> None:
    """Read the reply queue until N orders are terminal or the timeout passes."""
    queue = _reply_queue(client_id)
    receiver = _receiver(backend, namespace, data_dir, queue)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task(f"terminal orders on {queue}", total=expect)

            def show(p: WatchProgress) -> None:
                progress.update(task, completed=p.terminal)

            result = watch(receiver, expect, timedelta(seconds=timeout_s), on_progress=show)
    finally:
        receiver.close()
    console.print(summary_table(result))
    if out is not None:
        write_statuses(result, out)
    if result.timed_out:
        console.print(f"[red]timed out[/red] after {timeout_s} s: "
                      f"{result.terminal} of {expect} orders terminal")
        raise typer.Exit(1)


def summary_table(result: WatchResult) -> Table:
    """Build the summary: orders per final status, then message counters.

    Parameters
    ----------
    result : WatchResult
        From :func:`client.watch.watch`.

    Returns
    -------
    rich.table.Table
        Rows ``status -> orders``, then received, dead-lettered and lock-lost messages.
    """
    table = Table(title=f"{result.terminal} of {result.expect} orders terminal")
    table.add_column("status")
    table.add_column("orders", justify="right")
    for status, count in result.counts().items():
        table.add_row(status.value, str(count))
    table.add_section()
    table.add_row("messages received", str(result.received))
    table.add_row("dead-lettered (invalid)", str(result.dead_lettered))
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
            on_invalid: Callable[[InvalidOrder], None]) -> Iterator[Order]:
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
