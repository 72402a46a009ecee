"""One order on the dashboard: the ``opscli show`` report with timelines and messages (S7)."""

from __future__ import annotations

import json
from typing import Any

from ops.dashboard.overview import guarded, message_row
from ops.order_report import order_report
from orders.lifecycle.ids import IdRuleError, client_order_id, order_key
from orders.messaging.browse import MAX_PEEK, QueueBrowser
from orders.models import StateRecord
from orders.models.activities import FINISH_ATTEMPT, PUBLISH_STATUS
from orders.models.messages import StatusKind
from orders.observability.tracing import unwrap_input


class DetailRequestError(ValueError):
    """The order named in a detail request breaks the OrderID or client id rules."""


def resolve_key(client: str | None, order_id: str) -> str:
    """Return the state-store key of ``client``'s OrderID (``order_id`` itself without client).

    Raises
    ------
    DetailRequestError
        If the client id or the OrderID breaks its rule: the message names the request's
        field (``client`` or ``orderId``) and the rule.
    """
    try:
        if client is None:
            client_order_id(order_id)  # validates a key or a plain OrderID
            return order_id
        return order_key(client, order_id)
    except IdRuleError as exc:
        raise DetailRequestError(f"{_FIELDS.get(exc.part, repr(exc.part))}: {exc.rule}") from None


_FIELDS = {"client_id": "'client'", "order_id": "'orderId'",
           "order key": "'orderId' (an order key)"}


def status_json(status: Any) -> dict[str, Any] | None:
    """Return a ``DurableOrchestrationStatus`` as the status API's JSON; None if unknown.

    ``historyEvents`` is kept: the SDK stores unknown keys of the answer as attributes.
    """
    if not status:
        return None
    data: dict[str, Any] = dict(status.to_json())
    data["historyEvents"] = getattr(status, "historyEvents", None) or []
    data.pop("history", None)
    return data


def timeline(status: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Return one row per history event: ``type``, ``time``, ``name``, ``input``, ``result``.

    ``input`` without the trace envelope; ``result`` of a failure is its reason and details.
    """
    rows = []
    for event in (status or {}).get("historyEvents") or []:
        failure = {k: event[k] for k in ("Reason", "Details") if event.get(k) is not None}
        rows.append({"type": event.get("EventType"), "time": event.get("Timestamp"),
                     "name": event.get("FunctionName") or event.get("Name"),
                     "input": unwrap_input(event.get("Input"))[0],
                     "result": event.get("Result") if "Result" in event else failure or None})
    return rows


def sent_by_attempts(attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the status messages the attempts' histories show sent (S8).

    A completed ``publish_status``, or an unfenced ``finish_attempt`` given a ``replyTo``
    (workflow versions 3 to 6: "OrderCompleted").
    """
    sent = []
    for attempt in attempts:
        for row in attempt["timeline"]:
            if row["type"] != "TaskCompleted":
                continue
            given = row["input"] if isinstance(row["input"], dict) else {}
            if row["name"] == PUBLISH_STATUS.name:
                status, reason = given.get("status"), given.get("reason")
            elif row["name"] == FINISH_ATTEMPT.name and given.get("replyTo"):
                result = row["result"]
                result = json.loads(result) if isinstance(result, str) else result
                if not isinstance(result, dict) or result.get("fenced") is not False:
                    continue
                status, reason = StatusKind.ORDER_COMPLETED.value, None
            else:
                continue
            sent.append({"instanceId": attempt["instanceId"], "at": row["time"],
                         "status": status, "reason": reason})
    return sent


def queued_messages(services: Any, record: dict[str, Any] | None
                    ) -> tuple[list[dict[str, Any]], str | None]:
    """Return the order's status messages still on its reply queue, and a note if unreadable.

    A message the client has already received is gone; at most ``MAX_PEEK`` are looked at.
    """
    browser = services.depths
    if record is None or not isinstance(browser, QueueBrowser):
        return [], None
    known_as = record.get("clientOrderId") or record["orderId"]
    queue = StateRecord.model_validate(record).status_queue
    peeked, note = guarded(f"reply queue {queue}", lambda: browser.peek(queue, MAX_PEEK))
    mine = [message_row(m) for m in peeked or []
            if isinstance(m.body, dict) and m.body.get("orderId") == known_as]
    return mine, note


def order_detail(services: Any, key: str, statuses: dict[str, dict[str, Any] | Exception | None],
                 *, details: bool = False) -> dict[str, Any] | None:
    """Collect one order's detail; None if the order is unknown.

    ``statuses`` maps each attempt's instance id to :func:`status_json` or the exception
    that kept it from being read; without ``details`` classified data is withheld.
    """
    def history(instance_id: str) -> dict[str, Any] | None:
        found = statuses.get(instance_id)
        if isinstance(found, Exception):
            raise found
        return found

    report = order_report(services, key, history, details=details)
    if report is None:
        return None
    for attempt in report["attempts"]:
        attempt["timeline"] = timeline(attempt["status"])
        if attempt["status"] is not None:  # the timeline holds the events
            attempt["status"] = {k: v for k, v in attempt["status"].items()
                                 if k != "historyEvents"}
    queued, note = queued_messages(services, report["record"])
    return {**report, "sentByAttempts": sent_by_attempts(report["attempts"]),
            "queued": queued,
            "trace": trace_of(report["record"], services.settings.DEVHOST_DATA_DIR),
            "notes": [note] if note else []}


def trace_of(record: dict[str, Any] | None, data_dir: str | None = None
             ) -> dict[str, Any] | None:
    """Return the order's W3C trace id and the CLI command printing it (X8), if it has a record.

    ``data_dir``: the local host's data folder, named in the command (the traces are there).
    """
    if record is None:
        return None
    parent = record.get("traceParent")
    client, known_as = record.get("clientId"), record.get("clientOrderId") or record["orderId"]
    command = ("python -m opscli" + (f" --data-dir {data_dir}" if data_dir else "")
               + f" trace {known_as}" + (f" --client {client}" if client else ""))
    return {"traceParent": parent, "traceId": parent.split("-")[1] if parent else None,
            "command": command}
