"""Everything an operator needs about one order, in one JSON-ready report (S7, S9, D5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ops.inventory import reservation_of
from ops.redaction import redact
from orders.lifecycle.ids import attempt_instance_id as instance_id

HistoryReader = Callable[[str], dict[str, Any] | None]
"""``history(instance_id) -> status with historyEvents, or None if unknown``."""

def compensation_log(services: Any) -> Any | None:
    """Return the services' compensation log (``stores.compensation``), or None without one."""
    log = getattr(services.stores, "compensation", None)
    return log if hasattr(log, "entries") else None


def compensation_entries(services: Any, order_key: str, *,
                         details: bool = False) -> list[dict[str, Any]] | None:
    """Return the order's compensation log entries in order of completion; None without a log.

    ``details`` adds the classified data (S9, X10).
    """
    log = compensation_log(services)
    if log is None:
        return None
    rows = []
    for entry in log.entries(order_key):
        data = entry.model_dump(mode="json") if hasattr(entry, "model_dump") else dict(entry)
        if not details:
            step = (data.get("details") or {}).get("step")
            outcome = (data.get("details") or {}).get("outcome")
            data = {k: v for k, v in data.items() if k != "details"}
            data.update({"step": step, "outcome": outcome})
        rows.append(data)
    return rows


def attempt_ids(record: Any) -> list[str]:
    """Return the instance ids of the record's attempts, forward ones first."""
    ids = [instance_id(record.order_key, n) for n in range(1, record.attempt + 1)]
    compensation = getattr(record, "compensation_attempt", 0) or 0
    ids += [f"{record.order_key}:comp:{n}" for n in range(1, compensation + 1)]
    return ids


def order_report(services: Any, order_key: str, history: HistoryReader | None = None, *,
                 details: bool = False) -> dict[str, Any] | None:
    """Collect the report of one order; None if it has neither a state record nor an order.

    ``history`` None leaves histories out; without ``details`` classified values are
    withheld (:func:`ops.redaction.redact`).
    """
    record = services.stores.states.get(order_key)
    order = services.stores.orders.get(order_key)
    if record is None and order is None:
        return None
    attempts = []
    for iid in attempt_ids(record) if record is not None else []:
        status, error = None, None
        if history is not None:
            try:
                status = history(iid)
            except Exception as exc:  # noqa: BLE001 - show the other attempts anyway
                error = str(exc)
            if not details:
                status = redact(status)
        attempts.append({"instanceId": iid, "status": status, "error": error})
    return {
        "record": record.model_dump(mode="json") if record is not None else None,
        "order": (None if order is None else order.model_dump(mode="json") if details
                  else redact(order.model_dump(mode="json"))),
        "lineCount": None if order is None else len(order.lines),
        "compensation": compensation_entries(services, order_key, details=details),
        "reservation": reservation_of(services, order_key, details=details),
        "attempts": attempts,
    }
