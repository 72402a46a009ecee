"""Activities of compensation (SPEC S9) as plain functions of their input and the services.

Writing the log, handing a failed order over, and the compensation workflow's own steps.
Each is idempotent (SPEC X7): a rerun with the same input leaves the same result (log
entries keyed on OrderID + step, fenced conditional updates that recognise their own
earlier write).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from orders.compensation.plan import pending_undos, step_details
from orders.lifecycle.changes import (
    cut_reason,
    fail_without_undo,
    hand_over,
    set_deadline,
)
from orders.lifecycle.changes import (
    finish_compensation as finished,
)
from orders.lifecycle.fencing import FencedError, fenced_update
from orders.lifecycle.transitions import Actor
from orders.models import CompensationEntry, ProcessState, StateRecord, Step, UndoOutcome
from orders.observability import metrics
from orders.runtime import Services


def record_step(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Write the log entry of a completed step or undo (idempotent on OrderID + step).

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "workflowVersion", "step", "result", "outcome"?}``:
        ``result`` is the step's output or the service's answer.

    Returns
    -------
    dict
        ``{"seq": int, "created": bool}``; a rerun returns the stored ``seq``.

    Raises
    ------
    KeyError, pydantic.ValidationError
        If ``result`` lacks what the undo needs or holds something not allowed (card data).
    ConflictError
        If the step is logged with other details.
    """
    outcome = UndoOutcome(data["outcome"]) if data.get("outcome") else None
    details = step_details(Step(data["step"]), data.get("result"), outcome)
    entry = CompensationEntry.new(data["orderId"], details, instance_id=data["instanceId"],
                                  workflow_version=data["workflowVersion"],
                                  now=services.clock.now())
    stored = services.stores.compensation.record(entry)
    return {"seq": stored.record.seq, "created": stored.created}


def fail_order(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Hand a failed order over to compensation, or set Error if nothing is to undo.

    Fenced on LockedBy and on Processing (SPEC S4). A rerun finds the record with its own
    ``failureReason`` (the reason names the attempt) and answers as the first run did.

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "reason"}``.

    Returns
    -------
    dict
        ``{"fenced": bool, "state": "Compensating" | "Error" | None}``.
    """
    order_id, reason = data["orderId"], data["reason"]
    log = services.stores.compensation
    def change(record: StateRecord) -> StateRecord:
        give_up = hand_over if pending_undos(log.entries(order_id)) else fail_without_undo
        return give_up(record, reason, Actor.ORDER_WORKFLOW)

    try:
        record = fenced_update(services.stores.states, order_id, data["instanceId"], change)
    except FencedError:
        record = services.stores.states.get(order_id)
        if record is None or record.failure_reason != cut_reason(reason):
            return {"fenced": True, "state": None}
    state = "Error" if record.process_state is ProcessState.ERROR else "Compensating"
    return {"fenced": False, "state": state}


def begin_compensation(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set CompleteBy of a compensation attempt if it owns the record (SPEC S4, S9).

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "completeBy"}`` (ISO 8601 UTC).

    Returns
    -------
    dict
        ``{"fenced": bool, "replyTo", "failureReason"}``.
    """
    complete_by = datetime.fromisoformat(data["completeBy"].replace("Z", "+00:00"))
    try:
        record = fenced_update(
            services.stores.states, data["orderId"], data["instanceId"],
            lambda r: set_deadline(r, complete_by, Actor.COMPENSATION_WORKFLOW))
    except FencedError:
        return {"fenced": True, "replyTo": None, "failureReason": None}
    return {"fenced": False, "replyTo": record.reply_to, "failureReason": record.failure_reason}


def pending_undo_entries(order_id: str, services: Services) -> list[dict[str, Any]]:
    """Return the logged steps still to undo, newest first, in JSON form (SPEC S9)."""
    entries = pending_undos(services.stores.compensation.entries(order_id))
    return [entry.model_dump(mode="json") for entry in entries]


def release_inventory(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Release a reservation in the local inventory (undoes reserve inventory).

    Keyed on the reservation id, so releasing twice releases once (SPEC X7).

    Returns
    -------
    dict
        ``{"reservationId"}``.
    """
    return {"reservationId": data["reservationId"]}


def finish_compensation(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set Compensated or CompensationFailed if the attempt still owns the record (S4, S9).

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "state"}``.

    Returns
    -------
    dict
        ``{"fenced": bool}``; a rerun that finds its own final state is not fenced.
    """
    state = ProcessState(data["state"])
    try:
        fenced_update(services.stores.states, data["orderId"], data["instanceId"],
                      lambda r: finished(r, state))
    except FencedError:
        record = services.stores.states.get(data["orderId"])
        mine = (record is not None and record.locked_by == data["instanceId"]
                and record.process_state is state)
        return {"fenced": not mine}
    # Counted here, where the state is written once, not in the orchestrator (replays).
    metrics.record_compensation("compensated" if state is ProcessState.COMPENSATED
                                else "failed")
    return {"fenced": False}
