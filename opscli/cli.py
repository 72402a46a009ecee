"""Operator CLI (``python -m opscli``): find, inspect and resubmit orders (S7, S9, X8).

Commands, order naming (``acme~ORD-1`` or ``ORD-1 --client acme``, X10) and settings are
in docs/operations.md, "Operator CLI".
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from azurekit.app_settings import APP_SETTINGS_FILE, HOST_URL_FILE
from devhost.run.plain_help import plain_help
from ops.history import fetch_status
from ops.order_report import order_report
from ops.queries import LISTS, check_limit
from ops.resubmit import ResubmitOutcome, resubmit
from ops.summary import build_summary
from opscli.render import alerts_table, records_table, report_tables, summary_tables
from orders.budget import max_calls_per_service
from orders.lifecycle.ids import order_key
from orders.queues import load_queue_limits
from orders.settings import Settings, SettingsError, read_settings

app = typer.Typer(help="Operator actions: find, inspect and resubmit orders.",
                  no_args_is_help=True, add_completion=False,
                  rich_markup_mode=None)  # plain help: rich cuts long option names at 80 columns
PIPED_WIDTH = 200
"""Columns of a table written to a pipe or file when ``COLUMNS`` is unset (no cut step names)."""


def out() -> Console:
    """Return a console as wide as the terminal, or :data:`PIPED_WIDTH` when piped.

    Made per call, so ``COLUMNS`` is read when the command runs.
    """
    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    return Console(width=PIPED_WIDTH if piped else None)

DATA_DIR = typer.Option(None, "--data-dir", envvar="DEVHOST_DATA_DIR",
                        help="Local host data folder (SQLite backends); default .data.")
AS_JSON = typer.Option(False, "--json", help="Print JSON instead of tables.")
CLIENT = typer.Option(None, "--client", help="The client whose OrderID ORDER is (ORDER is "
                                             "then the client's OrderID, not the key).")


def order_key_of(order: str, client: str | None) -> str:
    """Return the key an operator means: ``order`` itself, or the key of ``client``'s OrderID.

    Raises
    ------
    typer.BadParameter
        If ``client`` or ``order`` breaks its rule.
    """
    if client is None:
        return order
    try:
        return order_key(client, order)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--client / ORDER") from None


def host_settings(data_dir: Path | None) -> dict[str, str]:
    """Return the app settings the local host of ``data_dir`` ran with, unless set here.

    This process's environment wins; a missing or unreadable file gives nothing.
    """
    try:
        recorded = json.loads((data_dir / APP_SETTINGS_FILE).read_text(encoding="utf-8")) \
            if data_dir is not None else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(recorded, dict):
        return {}
    return {k: v for k, v in recorded.items()
            if k in Settings.model_fields and isinstance(v, str) and k not in os.environ}


def cli_settings(data_dir: Path | None) -> Settings:
    """Read the app settings from the environment, with ``--data-dir`` for the local backends.

    Unset ones come from :func:`host_settings`; without a data folder, invalid settings are
    read again with the local default ``.data``.

    Raises
    ------
    SettingsError
        Permanent, naming each invalid or missing setting.
    """
    overrides: dict[str, Any] = host_settings(data_dir)
    if data_dir is not None:
        overrides["DEVHOST_DATA_DIR"] = str(data_dir)
    try:
        return read_settings(**overrides)
    except SettingsError:
        if data_dir is None:
            return cli_settings(Path(".data"))
        raise


def emit(data: Any) -> None:
    """Print ``data`` as JSON, unwrapped (for scripts and ``jq``)."""
    typer.echo(json.dumps(data, indent=2))


@contextmanager
def opened(ctx: typer.Context) -> Iterator[Any]:
    """Build the app's services for one command and close them afterwards."""
    from orders.runtime import build_services

    try:
        svc = build_services(cli_settings(ctx.obj))
    except SettingsError as exc:
        out().print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    try:
        yield svc
    finally:
        svc.close()


@app.callback()
def main(ctx: typer.Context, data_dir: Path | None = DATA_DIR) -> None:
    """Operator actions on the order service; settings come from the environment."""
    if data_dir is not None and not data_dir.is_dir():
        typer.echo(f"opscli: --data-dir {data_dir}: no such folder (give the folder the "
                   f"local host runs with, as 'devhost start --data-dir' took it)", err=True)
        raise typer.Exit(2)
    ctx.obj = data_dir


def hoist_data_dir(argv: list[str]) -> list[str]:
    """Return ``argv`` with ``--data-dir`` moved before the command, wherever it was given.

    ``devhost`` takes ``--data-dir`` after its command; ``opscli`` takes it in either place.
    """
    front: list[str] = []
    rest: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--data-dir":
            front += [arg, next(args, "")]
        elif arg.startswith("--data-dir="):
            front.append(arg)
        else:
            rest.append(arg)
    return front + rest


DEFAULT_HOST_URL = "http://127.0.0.1:7071"
"""Core Tools' default address, where no local host recorded its own."""


def history_url(data_dir: Path | None) -> str:
    """Return the URL the local host of ``data_dir`` serves on, else :data:`DEFAULT_HOST_URL`."""
    try:
        recorded = (data_dir or Path(".data")).joinpath(HOST_URL_FILE).read_text(
            encoding="utf-8").strip()
    except OSError:
        return DEFAULT_HOST_URL
    return recorded or DEFAULT_HOST_URL


@app.command()
def summary(ctx: typer.Context, as_json: bool = AS_JSON) -> None:
    """Orders by state, in-flight backlog and its limit, stuck orders, dead letters."""
    with opened(ctx) as svc:
        figures = build_summary(svc)
    emit(figures) if as_json else out().print(summary_tables(figures))


@app.command("list")
def list_orders(ctx: typer.Context,
                which: str = typer.Argument(..., help="stuck, error, compensationfailed, "
                                                       "compensating, pending, processing, ..."),
                limit: int = typer.Option(50, "--limit", help="Most orders to list (1-1000)."),
                client: str | None = typer.Option(None, "--client",
                                                  help="Only this client's orders."),
                as_json: bool = AS_JSON) -> None:
    """List orders in a state; ``stuck`` = Processing/Compensating with CompleteBy passed."""
    key = which.lower().replace("-", "").replace("_", "")
    if key not in LISTS:
        raise typer.BadParameter(f"must be one of {', '.join(sorted(LISTS))}", param_hint="WHICH")
    try:
        check_limit(limit)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--limit") from exc
    with opened(ctx) as svc:
        records, more = LISTS[key](svc.stores.states, svc.clock.now(), limit, client)
    if as_json:
        emit({"orders": [r.model_dump(mode="json") for r in records], "more": more})
    else:
        out().print(records_table(f"{which}: {len(records)} order(s)", records, more))


@app.command()
def show(ctx: typer.Context, order_id: str, client: str | None = CLIENT,
         host_url: str | None = typer.Option(
             None, "--host-url", envvar="DURABLE_HOST_URL",
             help="Functions host root for the Durable HTTP API; default: the local host's "
                  "own (recorded in its data folder), else http://127.0.0.1:7071."),
         code: str | None = typer.Option(None, "--code", envvar="DURABLE_SYSTEM_KEY",
                                         help="durabletask_extension system key (Azure)."),
         history: bool = typer.Option(True, "--history/--no-history",
                                      help="Read each attempt's orchestration history."),
         details: bool = typer.Option(False, "--details", help="Show compensation log "
                                      "details (classified customer/payment data)."),
         as_json: bool = AS_JSON) -> None:
    """Show one order: state record, order, compensation log, attempts with histories."""
    url = host_url or history_url(ctx.obj)
    reader = partial(fetch_status, url, code=code) if history else None
    key = order_key_of(order_id, client)
    with opened(ctx) as svc:
        report = order_report(svc, key, reader, details=details)
    if report is None:
        hint = "" if client or "~" in order_id else (
            f" (an OrderID alone is not a key: name its client, 'show {order_id} "
            f"--client ID', or give the key 'ID~{order_id}')")
        typer.echo(f"opscli: order {key}: no state record and no order{hint}", err=True)
        raise typer.Exit(1)
    emit(report) if as_json else out().print(report_tables(report))
    unread = [a for a in report["attempts"] if a["error"] is not None]
    if unread and len(unread) == len(report["attempts"]):
        typer.echo(f"opscli: no history could be read from {url} (is the host running? "
                   f"--host-url names another): {unread[0]['error']}", err=True)
        raise typer.Exit(3)


@app.command("resubmit")
def resubmit_order(ctx: typer.Context, order_id: str, client: str | None = CLIENT,
                   by: str = typer.Option(None, "--by", help="Operator name (logged); "
                                          "default: the login name."),
                   reason: str = typer.Option("", "--reason", help="Why (logged).")) -> None:
    """Resubmit an order in Error: Pending again, the starter starts its next attempt.

    Idempotent: a second call finds the order no longer in Error and changes nothing
    (exit code 1, with the reason).
    """
    key = order_key_of(order_id, client)
    with opened(ctx) as svc:
        result = resubmit(svc.stores.states, key, operator=by or getpass.getuser(),
                          reason=reason)
    ok = result.outcome is ResubmitOutcome.RESUBMITTED
    out().print(f"[{'green' if ok else 'yellow'}]{result.message}[/]", soft_wrap=True)
    if not ok:
        raise typer.Exit(1)


@app.command()
def trace(ctx: typer.Context, order_id: str, client: str | None = CLIENT) -> None:
    """Print one order's trace: every step, across attempts, with durations (X8).

    Reads ``traces.sqlite`` in the local host's data folder. An OrderID that several
    clients used is ambiguous (X10): name the client with ``--client``.
    """
    from opscli.trace_view import trace_tree
    from orders.observability.trace_store import TRACE_FILE, TraceStore

    store = TraceStore(Path(cli_settings(ctx.obj).DEVHOST_DATA_DIR or ".data") / TRACE_FILE)
    keys = [order_key_of(order_id, client)] if client else store.order_keys(order_id)
    if len(keys) > 1:
        out().print(f"[yellow]OrderID {order_id} is used by several clients "
                      f"({', '.join(keys)}): name one with --client[/yellow]")
        raise typer.Exit(2)
    spans = store.spans_of(keys[0]) if keys else []
    if not spans:
        out().print(f"[red]order {order_id}: no spans in {store.path}[/red]")
        raise typer.Exit(1)
    out().print(trace_tree(keys[0], spans))


@app.command()
def alerts(ctx: typer.Context,
           limit: int = typer.Option(25, "--limit", help="Most alerts to show (1-500)."),
           as_json: bool = AS_JSON) -> None:
    """Show the newest operator alerts first (queue ``operator-alerts``, S7, X8).

    Alerts a client can cause come once per client, kind and ten minutes; the messages
    they stand for are in the dead-letter queue they name (``ops summary`` counts them).
    """
    from orders.messaging.browse import MAX_PEEK, QueueBrowser, peek_newest
    from orders.names import OPERATOR_ALERTS_QUEUE

    if not 1 <= limit <= MAX_PEEK:
        raise typer.BadParameter(f"must be from 1 to {MAX_PEEK}", param_hint="--limit")
    with opened(ctx) as svc:
        if not isinstance(svc.depths, QueueBrowser):
            out().print("[red]this backend cannot browse queues[/red]")
            raise typer.Exit(2)
        found = peek_newest(svc.depths, OPERATOR_ALERTS_QUEUE, limit)
    bodies = [m.body if isinstance(m.body, dict) else {"reason": m.body} for m in found]
    emit(bodies) if as_json else out().print(alerts_table(bodies))


@app.command()
def stock(ctx: typer.Context, sku: str, as_json: bool = AS_JSON,
          details: bool = typer.Option(False, "--details",
                                       help="Show each hold's units (an order's line).")
          ) -> None:
    """Show one SKU's stock: available, loaded, restocked, held, and its order lines' holds."""
    from ops.inventory import stock_of
    from opscli.render import stock_tables

    with opened(ctx) as svc:
        found = stock_of(svc, sku, details=details)
    if found is None:
        out().print(f"[red]sku {sku}: no stock item (not stocked in this inventory)[/red]")
        raise typer.Exit(1)
    emit(found) if as_json else out().print(stock_tables(found))


@app.command("restock")
def restock_sku(ctx: typer.Context, sku: str,
                quantity: int = typer.Argument(..., help="Units to add (a positive int)."),
                by: str = typer.Option(None, "--by", help="Operator name (logged); "
                                       "default: the login name."),
                reason: str = typer.Option("", "--reason", help="Why (logged)."),
                as_json: bool = AS_JSON) -> None:
    """Add units to a SKU's stock (creates its item if missing); prints the stock after."""
    from ops.inventory import restock
    from opscli.render import stock_tables

    with opened(ctx) as svc:
        try:
            after = restock(svc, sku, quantity, operator=by or getpass.getuser(),
                            reason=reason)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="SKU / QUANTITY") from None
    emit(after) if as_json else out().print(stock_tables(after))


@app.command()
def budget(ctx: typer.Context) -> None:
    """Most calls one order can make to each remote service, against the budget (X2).

    Exits 1 when a service is over the budget (the app refuses such settings at start),
    2 when a setting is invalid.
    """
    try:
        settings = cli_settings(ctx.obj)
    except SettingsError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    calls = max_calls_per_service(settings, load_queue_limits())
    for service, n in calls.items():
        state = "ok" if n <= settings.RETRY_BUDGET_CALLS_PER_SERVICE else "OVER BUDGET"
        out().print(f"{service}: at most {n} calls per order "
                      f"(budget {settings.RETRY_BUDGET_CALLS_PER_SERVICE}: {state})")
    if any(n > settings.RETRY_BUDGET_CALLS_PER_SERVICE for n in calls.values()):
        raise typer.Exit(1)


plain_help(app)  # after every command is registered
