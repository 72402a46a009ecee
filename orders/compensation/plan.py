"""What undoes what: from log entries to undo steps and agent requests (SPEC S9).

Pure functions of JSON-shaped data, so orchestrators may call them (deterministic, no I/O)
and activities may use them to turn service answers into log details.

What a 404 or 409 to an undo means
----------------------------------
The payment service answers a refund with 404 ``payment_not_found`` when the order was
never charged, and 409 ``already_refunded`` when every charge is refunded; the shipping
service answers a cancel the same way. Both mean the same thing for compensation: there is
*nothing to undo* (never done, or already undone, e.g. by an earlier compensation attempt
whose reply was lost), so the undo step counts as done and is logged with outcome
``NothingToUndo``. Any other permanent failure (402, 422, ...) means the service refused to
undo: the compensation fails and an operator must act.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from orders.models import CompensationEntry, Step, UndoOutcome
from orders.models.compensation import UNDO_STEP, UNDOES
from orders.models.messages import AgentOutcome, AgentRequest, Operation, Service

NOTHING_TO_UNDO_STATUSES = frozenset({404, 409})
"""Permanent answers to an undo that mean there is nothing to undo (module docstring)."""

REMOTE_UNDO: dict[Step, tuple[Service, Operation]] = {
    Step.REFUND: ("payment", "refund"),
    Step.CANCEL_SHIPMENT: ("shipping", "cancel_shipment"),
}
"""Undo steps done by an agent; release inventory is local."""


def pending_undos(entries: Iterable[CompensationEntry]) -> list[CompensationEntry]:
    """Return the completed forward steps not yet undone, newest first (reverse ``seq``).

    Parameters
    ----------
    entries : iterable of CompensationEntry
        An order's log, in any order.

    Returns
    -------
    list of CompensationEntry
        The order in which to undo them (SPEC S9: reverse order of completion).
    """
    entries = list(entries)
    undone = {UNDOES[e.step] for e in entries if e.step in UNDOES}
    forward = [e for e in entries if e.step in UNDO_STEP and e.step not in undone]
    return sorted(forward, key=lambda e: (e.seq or 0, e.recorded_at), reverse=True)


def undo_step(entry: dict[str, Any]) -> Step:
    """Return the step that undoes a logged forward step (entry in JSON form).

    Raises
    ------
    ValueError
        If the entry is itself an undo.
    """
    step = Step(entry["details"]["step"])
    if step not in UNDO_STEP:
        raise ValueError(f"details.step: {step.value} is an undo, not a step to undo")
    return UNDO_STEP[step]


def undo_request(instance_id: str, entry: dict[str, Any], deadline: datetime,
                 max_attempts: int) -> AgentRequest:
    """Build the agent request that undoes a remote step (stable ids, SPEC A2, A4).

    Parameters
    ----------
    instance_id : str
        The compensation attempt's instance id.
    entry : dict
        The forward step's log entry, JSON form.
    deadline : datetime
        CompleteBy of the compensation attempt.
    max_attempts : int
        Calls the agent may make.

    Returns
    -------
    AgentRequest
        MessageId ``<instanceId>:<operation>``; idempotency key ``<OrderID>:<operation>``,
        the same in every compensation attempt, so the service undoes once.

    Raises
    ------
    ValueError
        If the step is undone locally.
    """
    step = undo_step(entry)
    if step not in REMOTE_UNDO:
        raise ValueError(f"details.step: {step.value} is undone locally, not by an agent")
    service, operation = REMOTE_UNDO[step]
    order_id, details = entry["orderId"], entry["details"]
    payload = {"orderId": order_id}
    if step is Step.REFUND:
        payload.update(paymentId=details["paymentId"], amount=details["amount"],
                       currency=details["currency"])
    else:
        payload.update(shipmentId=details["shipmentId"])
    return AgentRequest(
        message_id=f"{instance_id}:{operation}", order_id=order_id, instance_id=instance_id,
        service=service, operation=operation, idempotency_key=f"{order_id}:{operation}",
        complete_by=deadline, max_attempts=max_attempts, event_name=f"{operation}-reply",
        payload=payload)


def nothing_to_undo(reply: dict[str, Any]) -> bool:
    """Tell whether an agent's reply to an undo means *nothing to undo* (module docstring)."""
    return (reply["outcome"] == AgentOutcome.PERMANENT_FAILURE
            and reply.get("statusCode") in NOTHING_TO_UNDO_STATUSES)


def step_details(step: Step, result: dict[str, Any] | None,
                 outcome: UndoOutcome | None = None) -> dict[str, Any]:
    """Turn a step's result into the details of its log entry (JSON form).

    Only the fields the undo needs are taken (no card data ever reaches the log).

    Parameters
    ----------
    step : Step
        The completed step or undo.
    result : dict or None
        The local step's output or the service's answer (None for nothing to undo).
    outcome : UndoOutcome, optional
        For an undo: Undone or NothingToUndo.

    Returns
    -------
    dict
        Ready for :meth:`CompensationEntry.new`.

    Raises
    ------
    KeyError
        If ``result`` lacks a field the step needs.
    """
    got = result or {}
    details: dict[str, Any] = {"step": step.value}
    if step is Step.RESERVE_INVENTORY:
        details.update(reservationId=got["reservationId"], lines=got["lines"])
    elif step is Step.CHARGE:
        details.update(paymentId=got["paymentId"], amount=got["amount"],
                       currency=got["currency"])
    elif step is Step.SHIP:
        details.update(shipmentId=got["shipmentId"])
    elif step is Step.RELEASE_INVENTORY:
        details.update(reservationId=got["reservationId"],
                       outcome=(outcome or UndoOutcome.UNDONE).value)
    else:
        details["outcome"] = (outcome or UndoOutcome.UNDONE).value
        if outcome is not UndoOutcome.NOTHING_TO_UNDO:
            if step is Step.REFUND:
                details.update(refundId=got["refundId"], amount=got["amount"],
                               currency=got["currency"])
            else:
                details.update(shipmentId=got["shipmentId"])
    return details
