"""The compensation workflow: one attempt at undoing an order's completed steps (SPEC S9).

Started by the compensation starter under ``<OrderID>:comp:<m>`` once the record was handed
over (see :mod:`orders.compensation` for the whole protocol). It sets its CompleteBy, reads
the compensation log and undoes every step that was requested or completed and is not yet
undone, newest first:

- ship -> cancel shipment (shipping agent), charge -> refund (payment agent), each racing
  the agent's reply against CompleteBy like a forward step (S6);
- reserve inventory -> release inventory (local activity).

Each undo is logged as it completes, so a resumed attempt skips it. The log is read again
after a round, in case a stale attempt of the order logged a step late; a round undoes at
least one step, so the rounds are bounded by the number of steps.

Outcomes: all undone (or nothing to undo: the service's ``nothing_to_undo`` or
``already_undone`` code) -> Compensated and "Compensated" to the
client. Permanent refusal of an undo -> CompensationFailed, a CompensationFailed alert and
"CompensationFailed" to the client. Timer first or transient failure -> finish without
touching the record (Compensating with an expired CompleteBy, for the supervisor).
Deterministic orchestrator code (SPEC D4).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from datetime import datetime, timedelta
from typing import Any

from orchestrators.remote import remote_step
from orders import names
from orders.compensation.plan import nothing_to_undo, undo_request, undo_step
from orders.models import Step, UndoOutcome, format_utc
from orders.models.messages import AgentOutcome
from orders.observability.logs import replay_safe_logger

log = logging.getLogger("orders.compensation")

MAX_ROUNDS = len(Step)
"""Reads of the log per attempt at most (each round undoes at least one step)."""


def compensation_workflow(context: Any) -> Generator[Any, Any, dict[str, Any]]:
    """One compensation attempt; see the module docstring."""
    data = context.get_input()
    order_id, iid = data["orderId"], context.instance_id
    deadline = context.current_utc_datetime + timedelta(seconds=data["deadlineS"])
    begun = yield context.call_activity(names.BEGIN_COMPENSATION, {
        "orderId": order_id, "instanceId": iid, "completeBy": format_utc(deadline)})
    if begun["fenced"]:
        return {"outcome": "superseded"}
    undone: list[str] = []
    for _ in range(MAX_ROUNDS):
        pending = yield context.call_activity(names.PENDING_UNDOS, order_id)
        if not pending:
            break
        for entry in pending:
            result = yield from undo(context, data, entry, deadline)
            if result["outcome"] in ("timedOut", "transientFailure"):
                replay_safe_logger(context, log, order_id).info(
                    "compensation %s: %s %s; left for the supervisor", iid, result["step"],
                    result["outcome"])
                return result
            if result["outcome"] == "refused":
                return (yield from end(context, begun, "CompensationFailed",
                                       f"{result['step']} refused: {result['reason']}"))
            undone.append(f"{result['step']} ({result['outcome']})")
    else:
        return (yield from end(context, begun, "CompensationFailed",
                               "the compensation log kept growing while being undone"))
    summary = ", ".join(undone) or "nothing"
    return (yield from end(context, begun, "Compensated", f"undone: {summary}"))


def undo(context: Any, data: dict[str, Any], entry: dict[str, Any],
         deadline: datetime) -> Generator[Any, Any, dict[str, Any]]:
    """Undo one logged step and log the undo.

    Returns
    -------
    dict
        ``{"outcome", "step"}``; outcome is ``Undone``, ``NothingToUndo``, ``refused``
        (with ``reason``), ``timedOut`` or ``transientFailure``.
    """
    step = undo_step(entry)
    order_id = data["orderId"]
    if step is Step.RELEASE_INVENTORY:
        result = yield context.call_activity(names.RELEASE_INVENTORY, {
            "orderId": order_id, "reservationId": entry["details"]["reservationId"]})
        outcome = UndoOutcome.UNDONE
    else:
        request = undo_request(context.instance_id, entry, deadline, data["agentMaxAttempts"])
        reply = yield from remote_step(context, request, deadline)
        if reply is None:
            return {"outcome": "timedOut", "step": step.value}
        if reply["outcome"] == AgentOutcome.TRANSIENT_FAILURE:
            return {"outcome": "transientFailure", "step": step.value}
        if reply["outcome"] == AgentOutcome.PERMANENT_FAILURE and not nothing_to_undo(reply):
            return {"outcome": "refused", "step": step.value,
                    "reason": f"{reply.get('statusCode')} {reply.get('reason')}"}
        if reply["outcome"] == AgentOutcome.SUCCEEDED:
            result, outcome = reply["result"], UndoOutcome.UNDONE
        else:
            result, outcome = None, UndoOutcome.NOTHING_TO_UNDO
    yield context.call_activity(names.RECORD_STEP, {
        "orderId": order_id, "instanceId": context.instance_id,
        "workflowVersion": data["workflowVersion"], "step": step.value, "result": result,
        "outcome": outcome.value})
    return {"outcome": outcome.value, "step": step.value}


def end(context: Any, begun: dict[str, Any], state: str,
        detail: str) -> Generator[Any, Any, dict[str, Any]]:
    """Set the final state (fenced), alert on failure, tell the client (SPEC S8, S9)."""
    data = context.get_input()
    order_id, iid = data["orderId"], context.instance_id
    done = yield context.call_activity(names.FINISH_COMPENSATION, {
        "orderId": order_id, "instanceId": iid, "state": state})
    if done["fenced"]:
        return {"outcome": "superseded"}
    reason = f"{begun['failureReason'] or 'order failed'}; {detail}"
    if state == "CompensationFailed":
        yield context.call_activity(names.ALERT_OPERATOR, {
            "kind": "CompensationFailed", "orderId": order_id, "instanceId": iid,
            "reason": reason})
    yield context.call_activity(names.PUBLISH_STATUS, {
        "orderId": order_id, "instanceId": iid, "replyTo": begun["replyTo"], "status": state,
        "reason": reason})
    return {"outcome": "compensated" if state == "Compensated" else "compensationFailed",
            "detail": detail}
