"""Rich tables of the operator CLI, from the JSON-ready data of :mod:`ops`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table

from orders.lifecycle.ids import split_order_key
from orders.models import StateRecord
from orders.observability.tracing import unwrap_input

MAX_CELL = 80
"""Longest input/result text shown in a history cell."""


def _short(value: Any, limit: int | None = MAX_CELL) -> str:
    """Return ``value`` as cell text, cut to ``limit`` characters (None: whole)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return escape(text if limit is None or len(text) <= limit else text[: limit - 1] + "…")


def summary_tables(summary: dict[str, Any]) -> RenderableType:
    """Render the ops summary: states, backlog, stuck, dead letters, circuits, budget."""
    states = Table(title=f"Orders by state at {summary['at']}")
    states.add_column("ProcessState")
    states.add_column("Orders", justify="right")
    for state, count in summary["counts"].items():
        states.add_row(state, str(count))
    states.add_row("[b]total[/b]", f"[b]{summary['total']}[/b]")

    figures = Table(title="Backlog and health")
    figures.add_column("Figure")
    figures.add_column("Value", justify="right")
    figures.add_row("in flight (Pending+Processing+Compensating)", str(summary["inFlight"]))
    figures.add_row("MAX_IN_FLIGHT", str(summary["maxInFlight"]))
    figures.add_row("utilisation", f"{summary['inFlightUtilization']:.0%}")
    stuck = f"{summary['stuck']}{'+' if summary['stuckTruncated'] else ''}"
    figures.add_row("stuck (CompleteBy passed)", stuck)
    if summary["deadLetters"] is None:
        figures.add_row("dead letters", escape(summary["deadLetterNote"] or "unavailable"))
    else:
        for queue, depth in summary["deadLetters"].items():
            figures.add_row(f"dead letters: {queue}", str(depth))
    for service, state in summary["circuits"].items():
        figures.add_row(f"circuit {service} (this process)", state)
    budget = summary["retryBudget"]
    for service, calls in budget["maxCallsPerService"].items():
        figures.add_row(f"max calls/order: {service}", f"{calls} of {budget['budget']}")
    return Group(states, figures)


def records_table(title: str, records: Iterable[StateRecord], more: bool) -> Table:
    """Render state records, one row each."""
    table = Table(title=title + (" (more exist; raise --limit)" if more else ""))
    table.add_column("Order key", no_wrap=True)  # <clientId>~<OrderID> (legacy: OrderID)
    for column in ("ProcessState", "Attempt", "FailureCount", "LockedBy", "CompleteBy",
                   "UpdatedAt", "Reason"):
        table.add_column(column)
    for r in records:
        table.add_row(r.order_key, r.process_state.value, str(r.attempt), str(r.failure_count),
                      r.locked_by or "", r.complete_by.isoformat() if r.complete_by else "",
                      r.updated_at.isoformat(), _short(getattr(r, "failure_reason", None), 60))
    return table


def alerts_table(alerts: list[dict[str, Any]]) -> Table:
    """Render operator alerts (bodies of ``operator-alerts``), in the order given."""
    table = Table(title=f"{len(alerts)} operator alert(s), newest first")
    for column in ("At", "Kind", "Client", "Order", "Reason"):
        table.add_column(column)
    for a in alerts:
        table.add_row(str(a.get("at", "")), str(a.get("kind", "")), _alert_client(a),
                      str(a.get("orderId") or ""), _short(a.get("reason"), 200))
    return table


def _alert_client(alert: dict[str, Any]) -> str:
    """Return the alert's client: its ``clientId``, else the client of its order key.

    An order's alerts carry the order key, whose client part the host set from the queue
    the order came on (S8); ``clientId`` is only on alerts about a client's own traffic.
    """
    if alert.get("clientId"):
        return str(alert["clientId"])
    try:
        client, _ = split_order_key(str(alert.get("orderId") or ""))
    except ValueError:  # no order key (or a foreign text): nothing to show
        return ""
    return client or ""


COMPENSATION_COLUMNS = ("step", "outcome", "seq", "recordedAt", "instanceId",
                        "classification", "retainUntil", "workflowVersion", "details")
"""Compensation log columns in reading order: what was done first, housekeeping last."""

HIDDEN_COMPENSATION_KEYS = frozenset({"orderId", "schemaVersion", "retentionDays"})
"""Keys not shown: the order is the report's, the others repeat ``retainUntil``/the form."""


def compensation_table(rows: list[dict[str, Any]]) -> Table:
    """Render the compensation log, step name first and never cut (S9); unknown keys come last."""
    log = Table(title="Compensation log (order of completion)")
    present = {k for row in rows for k in row} - HIDDEN_COMPENSATION_KEYS
    keys = [k for k in COMPENSATION_COLUMNS if k in present]
    keys += sorted(present - set(COMPENSATION_COLUMNS))
    for key in keys:
        log.add_column(key, no_wrap=key in ("step", "outcome", "seq"))
    for row in rows:
        log.add_row(*(_short(row.get(k), MAX_CELL if k == "details" else 40) for k in keys))
    return log


def business_input(value: Any) -> Any:
    """Return a history event's input as an operator reads it: the business data first.

    Of an activity's trace envelope (:func:`orders.observability.tracing.unwrap_input`) only
    ``input`` is shown; an orchestration's ``traceParent`` is shown last.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    value = unwrap_input(value)[0]
    if isinstance(value, dict) and "traceParent" in value:
        value = {**{k: v for k, v in value.items() if k != "traceParent"},
                 "traceParent": value["traceParent"]}
    return value


def history_table(status: dict[str, Any]) -> Table:
    """Render one attempt's history events (D5); type and name never cut, times of day in UTC."""
    table = Table(title=f"{status.get('instanceId')} {status.get('runtimeStatus')} "
                        f"(created {status.get('createdTime')}, updated "
                        f"{status.get('lastUpdatedTime')})")
    table.add_column("EventType", no_wrap=True)
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Name", no_wrap=True)
    table.add_column("Input", ratio=1, overflow="fold")
    table.add_column("Result", ratio=1, overflow="fold")
    for event in status.get("historyEvents") or []:
        stamp = str(event.get("Timestamp", ""))
        table.add_row(str(event.get("EventType", "")), stamp.split("T", 1)[-1][:12],
                      _short(event.get("FunctionName") or event.get("Name")),
                      _short(business_input(event.get("Input"))),
                      _short(event.get("Result")))
    return table


def report_tables(report: dict[str, Any]) -> RenderableType:
    """Render one order: state record, order, compensation log, attempts and histories."""
    parts: list[RenderableType] = []
    record = Table(title="State record", show_header=False)
    for key, value in (report["record"] or {}).items():  # whole, wrapped: one order's reason
        record.add_row(key, _short(value, limit=None))
    parts.append(record)
    order = report["order"] or {}
    summary = Table(title="Order", show_header=False)
    for key in ("orderId", "customerId", "currency", "totalPrice", "createdAt"):
        summary.add_row(key, _short(order.get(key)))
    # The count, not len(order["lines"]): withheld lines are the text "<Confidential>".
    summary.add_row("lines", _short(report.get("lineCount")))
    parts.append(summary)
    if report["compensation"] is None:
        parts.append("[dim]compensation log: not available in this deployment[/dim]")
    else:
        parts.append(compensation_table(report["compensation"]))
    if report.get("reservation"):
        parts.append(rows_table("Reservation (inventory holds, per line)",
                                report["reservation"]))
    for attempt in report["attempts"]:
        if attempt["error"]:
            parts.append(f"[red]{escape(attempt['instanceId'])}: {escape(attempt['error'])}[/red]")
        elif attempt["status"] is None:
            parts.append(f"{escape(attempt['instanceId'])}: no orchestration history "
                         "(not started, purged, or histories not requested)")
        else:
            parts.append(history_table(attempt["status"]))
    return Group(*parts)


def rows_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """Render JSON rows that share their keys as one table, a column per key."""
    table = Table(title=title)
    keys = list(rows[0]) if rows else []
    for key in keys:
        table.add_column(key)
    for row in rows:
        table.add_row(*(_short(row.get(k), 40) for k in keys))
    return table


def stock_tables(stock: dict[str, Any]) -> RenderableType:
    """Render one SKU's stock (:func:`ops.inventory.stock_json`) and its holds."""
    figures = Table(title=f"Stock of {escape(stock['sku'])}", show_header=False)
    for key in ("available", "loaded", "restocked", "held", "consumed", "balanced",
                "holdCount"):
        figures.add_row(key, _short(stock[key]))
    return Group(figures, rows_table("Holds (order line, units)", stock["holds"]))
