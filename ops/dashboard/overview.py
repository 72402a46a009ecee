"""The dashboard's main view (S7, X8), from bounded reads; see docs/operations.md, "Dashboard"."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from ops.dashboard.series import charts
from ops.queries import list_recent, list_stuck
from ops.redaction import shown_body
from ops.summary import current_summary, watched_queues
from orders.lifecycle.ids import split_order_key
from orders.messaging.browse import PeekedMessage, QueueBrowser, peek_newest, peek_older
from orders.messaging.settlement import DEAD_LETTERS_QUEUE, SOURCE_PROPERTY
from orders.models import ProcessState, StateRecord, format_utc
from orders.models.messages import reply_queue, submit_queue
from orders.names import OPERATOR_ALERTS_QUEUE, ORDERS_QUEUE

log = logging.getLogger("orders.ops.dashboard")
T = TypeVar("T")

DEAD_LETTERS_PER_QUEUE = 20
ALERTS_SHOWN = 25
ALERTS_READ = 500
"""Newest operator alerts read; they are grouped per kind and client (:func:`alert_groups`)."""
ALERTS_SCAN_MAX = 5_000
"""Most alerts read back, ``ALERTS_READ`` at a time, to find a client not among the newest."""


def record_row(record: StateRecord, now: datetime, window_s: float) -> dict[str, Any]:
    """Return a state record as a JSON row, with ``overdueS`` and ``beyondWindow``.

    ``beyondWindow``: CompleteBy passed longer ago than ``SUPERVISOR_SCAN_WINDOW_S``.
    """
    row: dict[str, Any] = record.model_dump(mode="json")
    overdue = ((now - record.complete_by).total_seconds()
               if record.complete_by is not None and record.complete_by < now else None)
    row.update(overdueS=overdue, beyondWindow=overdue is not None and overdue > window_s)
    return row


def alert_client_of(message: PeekedMessage) -> str | None:
    """Return the client an alert body is about: ``clientId``, else its order key's, or None."""
    body = message.body if isinstance(message.body, dict) else {}
    client = body.get("clientId")
    if client is None and isinstance(body.get("orderId"), str):
        try:
            client = split_order_key(body["orderId"])[0]
        except ValueError:
            client = None
    return client if isinstance(client, str) else None


def alert_groups(newest_first: list[PeekedMessage]) -> list[tuple[PeekedMessage, int]]:
    """Group alerts per kind and client (:func:`alert_client_of`): newest and count."""
    groups: dict[tuple[Any, Any], list[Any]] = {}
    for message in newest_first:
        body = message.body if isinstance(message.body, dict) else {}
        groups.setdefault((body.get("kind"), alert_client_of(message)), [message, 0])[1] += 1
    return [(first, count) for first, count in groups.values()]


def fair_share(groups: list[tuple[PeekedMessage, int]], shown: int
               ) -> list[tuple[PeekedMessage, int]]:
    """Return up to ``shown`` groups, taken in turn per client, newest first (X10).

    Each client's newest group comes before any client's second, so one client's many
    kinds of alert cannot push another client's off the dashboard.
    """
    per_client: dict[str | None, list[tuple[PeekedMessage, int]]] = {}
    for group in groups:
        per_client.setdefault(alert_client_of(group[0]), []).append(group)
    chosen: list[tuple[PeekedMessage, int]] = []
    turn = 0
    while len(chosen) < shown and any(len(g) > turn for g in per_client.values()):
        chosen.extend(g[turn] for g in per_client.values() if len(g) > turn)
        turn += 1
    chosen = chosen[:shown]
    return sorted(chosen, key=lambda group: group[0].sequence_number, reverse=True)


def newest_dead_letters(browser: QueueBrowser, queue: str, subqueue: bool
                        ) -> list[PeekedMessage]:
    """Return the newest dead letters of ``queue``, newest first, shared per source queue.

    A dead-letter subqueue holds one queue's (one client's): its newest
    ``DEAD_LETTERS_PER_QUEUE``. Azure's shared ``dead-letters`` (``subqueue`` False) holds
    every queue's: up to ``DEAD_LETTERS_PER_QUEUE`` per ``DeadLetterSource`` among its
    newest ``ALERTS_READ``, so one client's flood of bad messages cannot hide another
    client's (X10).
    """
    if subqueue:
        return peek_newest(browser, queue, DEAD_LETTERS_PER_QUEUE, dead_letter=True)
    per_source: dict[Any, list[PeekedMessage]] = {}
    for message in peek_newest(browser, queue, ALERTS_READ):
        shown = per_source.setdefault(message.application_properties.get(SOURCE_PROPERTY), [])
        if len(shown) < DEAD_LETTERS_PER_QUEUE:
            shown.append(message)
    return sorted((m for shown in per_source.values() for m in shown),
                  key=lambda m: m.sequence_number, reverse=True)


def newest_alerts(browser: QueueBrowser, clients: list[str]) -> list[PeekedMessage]:
    """Return the newest alerts, newest first, read back until every client has one.

    ``ALERTS_READ`` at a time while a client of ``clients`` (``ORDER_CLIENTS``) has none
    among those read, up to ``ALERTS_SCAN_MAX``: one client's volume cannot hide another
    client's newest alert (X10).
    """
    read = peek_newest(browser, OPERATOR_ALERTS_QUEUE, ALERTS_READ)
    missing = set(clients) - {alert_client_of(m) for m in read}
    while missing and read and len(read) < ALERTS_SCAN_MAX:
        older = peek_older(browser, OPERATOR_ALERTS_QUEUE, read[-1].sequence_number,
                           ALERTS_READ)
        if not older:
            break
        read.extend(older)
        missing -= {alert_client_of(m) for m in older}
    return read


def alert_row(message: PeekedMessage, dead_counts: dict[str, int],
              forwarded: int | None = None) -> dict[str, Any]:
    """Return an alert as a row; a collapsed one with its queue's dead-letter count.

    ``deadLettered`` counts the dead-letter queue of the queue the alert came on; with
    ``forwarded`` (Azure) the row adds ``dead-letters``'s count as ``forwardedDeadLetters``.
    """
    row = message_row(message)
    body = message.body if isinstance(message.body, dict) else {}
    queue = (submit_queue(body["clientId"]) if isinstance(body.get("clientId"), str)
             else ORDERS_QUEUE if body.get("kind") == "UseClientQueue" else None)
    row["collapsedQueue"] = queue
    row["deadLettered"] = dead_counts.get(queue) if queue else None
    row["forwardedDeadLetters"] = forwarded if queue else None
    row["order"] = alert_order(body)
    return row


def alert_order(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the order an alert is about, ``{"key", "client", "orderId"}``, or None.

    ``orderId`` of the answer is the client's OrderID, as the dashboard's lookup takes it.
    """
    key = body.get("orderId")
    if not isinstance(key, str):
        return None
    try:
        client, order_id = split_order_key(key)
    except ValueError:
        return None
    return {"key": key, "client": client, "orderId": order_id}


def attention(services: Any, now: datetime, limit: int) -> dict[str, Any]:
    """Return the orders needing an operator: stuck, then Error and CompensationFailed.

    Each as ``{"orders": [row], "more": bool}``; Error and CompensationFailed latest first.
    """
    states = services.stores.states
    found = {"stuck": list_stuck(states, now, limit),
             **{s.value: list_recent(states, s, limit)
                for s in (ProcessState.ERROR, ProcessState.COMPENSATION_FAILED)}}
    return _rows(services, found, now)


def compensations(services: Any, now: datetime, limit: int,
                  failed: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the orders whose compensation ended, the latest first: Compensated and failed.

    ``failed`` is the CompensationFailed list if :func:`attention` has read it already.
    """
    states, name = services.stores.states, ProcessState.COMPENSATION_FAILED.value
    found = {ProcessState.COMPENSATED.value: list_recent(states, ProcessState.COMPENSATED,
                                                         limit)}
    if failed is None:
        found[name] = list_recent(states, ProcessState.COMPENSATION_FAILED, limit)
    rows = _rows(services, found, now)
    return rows if failed is None else {**rows, name: failed}


def _rows(services: Any, found: dict[str, tuple[list[StateRecord], bool]], now: datetime
          ) -> dict[str, Any]:
    """Turn lists of records into ``{name: {"orders": [row], "more": bool}}``."""
    window_s = services.settings.SUPERVISOR_SCAN_WINDOW_S
    return {name: {"orders": [record_row(r, now, window_s) for r in records], "more": more}
            for name, (records, more) in found.items()}


def message_row(message: PeekedMessage) -> dict[str, Any]:
    """Return a peeked message as a JSON row."""
    return {"queue": message.queue, "sequenceNumber": message.sequence_number,
            "messageId": message.message_id,
            "enqueuedAt": format_utc(message.enqueued_at) if message.enqueued_at else None,
            "deliveryCount": message.delivery_count,
            "applicationProperties": message.application_properties, "body": message.body,
            "deadLetterReason": message.dead_letter_reason,
            "deadLetterDescription": message.dead_letter_description}


def guarded(what: str, read: Callable[[], T]) -> tuple[T | None, str | None]:
    """Run ``read``; on failure log it and return None and a note naming ``what`` and the error."""
    try:
        return read(), None
    except Exception as exc:  # noqa: BLE001 - shown as a note, logged with the traceback
        log.warning("dashboard: cannot read %s", what, exc_info=True)
        return None, f"{what} unavailable ({type(exc).__name__})"


def queues(services: Any, *, details: bool = False) -> dict[str, Any]:
    """Return queue counts, dead-lettered messages, recent alerts and notes on what is missing.

    Dead-lettered bodies are shown by :func:`ops.redaction.shown_body`: classified values and
    bodies that are not JSON withheld unless ``details`` (X10).
    """
    browser = services.depths
    if not isinstance(browser, QueueBrowser):
        return {"queues": None, "deadLettered": [], "alerts": [],
                "notes": ["this process has no queue browser"]}
    settings = services.settings
    names = [*watched_queues(settings), *(reply_queue(c) for c in settings.order_clients)]
    counts, count_note = guarded("queue counts", lambda: browser.queue_counts(names))
    rows: list[dict[str, Any]] = [{"name": q, "active": c.active, "deadLetter": c.dead_letter}
                                  for q, c in (counts or {}).items()]
    dead: list[dict[str, Any]] = []
    notes = [count_note]
    # Dead-letter subqueues, and in Azure the active messages of ``dead-letters``, where the
    # app forwards what it dead-letters with its reason (orders.messaging.settlement).
    wanted = [(row["name"], True) for row in rows if row["deadLetter"]] + [
        (row["name"], False) for row in rows if row["name"] == DEAD_LETTERS_QUEUE and row["active"]]
    for name, subqueue in wanted:
        peeked, note = guarded(f"dead letters of {name}", partial(
            newest_dead_letters, browser, name, subqueue))
        # A dead-lettered order's body holds its customer and payment data (X10).
        dead.extend({**row, "body": shown_body(row["body"], details)}
                    for row in map(message_row, peeked or []))
        notes.append(note)
    alerts, note = guarded("operator alerts",
                           lambda: newest_alerts(browser, list(settings.order_clients)))
    notes.append(note)
    dead_counts = {row["name"]: row["deadLetter"] for row in rows}
    # In Azure the app forwards what it dead-letters to ``dead-letters``, for every queue.
    forwarded = {row["name"]: row["active"] for row in rows}.get(DEAD_LETTERS_QUEUE)
    recent = [alert_row(m, dead_counts, forwarded) | {"count": n}
              for m, n in fair_share(alert_groups(alerts or []), ALERTS_SHOWN)]
    return {"queues": rows if counts is not None else None, "deadLettered": dead,
            "alerts": recent, "notes": [n for n in notes if n]}


def build_overview(services: Any, limit: int, *, details: bool = False) -> dict[str, Any]:
    """Collect the dashboard's main view (``limit``: most orders per attention list, 1..1000).

    ``details``: dead-lettered bodies shown whole (the caller holds the details role, X10).
    """
    now = services.clock.now()
    summary = current_summary(services)
    needing = attention(services, now, limit)
    return {"summary": summary,
            "attention": needing,
            "compensations": compensations(services, now, limit,
                                           needing[ProcessState.COMPENSATION_FAILED.value]),
            "charts": charts(services.stores.states, now, summary["inFlight"]),
            "messaging": queues(services, details=details),
            "supervisorWindowS": services.settings.SUPERVISOR_SCAN_WINDOW_S}
