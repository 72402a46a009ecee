"""The compensation workflow: one attempt at undoing an order's logged steps (S9).

Started as ``<order key>:comp:<m>`` once the record was handed over; it undoes every
requested or completed step not yet undone, newest first (cancel shipment and refund race
the agent's reply against CompleteBy like a forward step; release inventory is local), logs
each undo, and reads the log again after a round in case a stale attempt logged a step late.
Version 2 (``orders.names.COMPENSATION_VERSIONS``) acts only on an undo reply bound to the
request it sent; version 1, kept for attempts started before it, on any reply on the event.
The protocol and its outcomes: docs/pipeline.md, "Compensation, in detail".
Deterministic orchestrator code (D4).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.agent_steps import bound_remote_step, remote_step
from orchestrators.calls import call
from orders.compensation.plan import nothing_to_undo, undo_request, undo_step
from orders.models import CompensationEntry, Step, UndoOutcome
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_COMPENSATION,
    FINISH_COMPENSATION,
    PENDING_UNDOS,
    PUBLISH_STATUS,
    RECORD_STEP,
    RELEASE_INVENTORY,
)
from orders.models.compensation import ReservationDetails
from orders.models.compensation_io import (
    BeginCompensationInput,
    BeginCompensationResult,
    CompensationEnded,
    CompensationOutcome,
    CompensationWorkflowInput,
    FinishCompensationInput,
    RecordStepInput,
    ReleaseInventoryInput,
)
from orders.models.messages import AgentOutcome, StatusKind
from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from orders.models.step_io import LeftForSupervisor, Superseded
from orders.names import BOUND_UNDO_REPLIES_FROM
from orders.observability.logs import replay_safe_logger

log = logging.getLogger("orders.compensation")

MAX_ROUNDS = len(Step)
"""Reads of the log per attempt at most (each round undoes at least one step)."""

Compensation = Generator[Any, Any, CompensationOutcome]
"""A compensation attempt's generator: yields the SDK's tasks, returns the outcome."""


@dataclass(frozen=True)
class Refusal:
    """An undo the service refused permanently; ``detail``: status code and reason."""

    step: Step
    detail: str


def compensation_workflow(
        context: DurableOrchestrationContext) -> Generator[Any, Any, dict[str, Any]]:
    """One compensation attempt (S9); takes and raises what ``order_workflow`` does."""
    data = CompensationWorkflowInput.model_validate(context.get_input())
    outcome = yield from compensate(context, data)
    return outcome.model_dump(mode="json")


def compensate(context: DurableOrchestrationContext,
               data: CompensationWorkflowInput) -> Compensation:
    """Undo every pending step, newest first, round after round (S9)."""
    order_key, iid = data.order_key, context.instance_id
    deadline = context.current_utc_datetime + timedelta(seconds=data.deadline_s)
    begun = yield from call(context, BEGIN_COMPENSATION, BeginCompensationInput(
        order_key=order_key, instance_id=iid, complete_by=deadline))
    if begun.fenced:
        return Superseded()
    undone: list[str] = []
    for _ in range(MAX_ROUNDS):
        pending = yield from call(context, PENDING_UNDOS, order_key)
        if not pending:
            break
        for entry in pending:
            result = yield from undo(context, data, entry, deadline)
            if isinstance(result, LeftForSupervisor):
                replay_safe_logger(context, log, order_key).info(
                    "compensation %s: %s %s; left for the supervisor", iid, result.step,
                    result.outcome)
                return result
            if isinstance(result, Refusal):
                return (yield from end(context, data, begun, "CompensationFailed",
                                       f"{result.step.value} refused: {result.detail}"))
            undone.append(f"{undo_step(entry).value} ({result.value})")
    else:
        return (yield from end(context, data, begun, "CompensationFailed",
                               "the compensation log kept growing while being undone"))
    summary = ", ".join(undone) or "nothing"
    return (yield from end(context, data, begun, "Compensated", f"undone: {summary}"))


def undo(context: DurableOrchestrationContext, data: CompensationWorkflowInput,
         entry: CompensationEntry, deadline: datetime,
         ) -> Generator[Any, Any, UndoOutcome | Refusal | LeftForSupervisor]:
    """Undo one logged step and log the undo (a refusal or a timeout logs nothing).

    Raises
    ------
    ValueError
        If a reserve inventory entry holds no reservation (a broken log entry).
    """
    step = undo_step(entry)
    result: dict[str, Any] | None
    if step is Step.RELEASE_INVENTORY:
        details = entry.details
        if not isinstance(details, ReservationDetails):
            raise ValueError(f"details: no reservation to release in {details.step}")
        released = yield from call(context, RELEASE_INVENTORY, ReleaseInventoryInput(
            order_key=data.order_key, reservation_id=details.reservation_id))
        result = released.model_dump(mode="json")
        outcome = UndoOutcome.UNDONE
    else:
        request = undo_request(context.instance_id, entry, deadline, data.agent_max_attempts)
        if (data.compensation_version or 1) >= BOUND_UNDO_REPLIES_FROM:
            reply = yield from bound_remote_step(context, request, deadline)
        else:  # version 1: any reply on the event (attempts started before version 2)
            reply = yield from remote_step(context, request, deadline)
        if reply is None:
            return LeftForSupervisor(outcome="timedOut", step=step.value)
        if reply.outcome is AgentOutcome.TRANSIENT_FAILURE:
            return LeftForSupervisor(outcome="transientFailure", step=step.value)
        if reply.outcome is AgentOutcome.PERMANENT_FAILURE and not nothing_to_undo(reply):
            return Refusal(step, f"{reply.status_code} {reply.reason}")
        if reply.outcome is AgentOutcome.SUCCEEDED:
            result, outcome = reply.result, UndoOutcome.UNDONE
        else:
            result, outcome = None, UndoOutcome.NOTHING_TO_UNDO
    yield from call(context, RECORD_STEP, RecordStepInput(
        order_key=data.order_key, instance_id=context.instance_id,
        workflow_version=data.workflow_version, step=step, result=result, outcome=outcome))
    return outcome


def end(context: DurableOrchestrationContext, data: CompensationWorkflowInput,
        begun: BeginCompensationResult, state: Literal["Compensated", "CompensationFailed"],
        detail: str) -> Compensation:
    """Set the final state (fenced), alert on failure, tell the client (S8, S9)."""
    order_key, iid = data.order_key, context.instance_id
    done = yield from call(context, FINISH_COMPENSATION, FinishCompensationInput(
        order_key=order_key, instance_id=iid, state=state))
    if done.fenced:
        return Superseded()
    reason = f"{begun.failure_reason or 'order failed'}; {detail}"
    if state == "CompensationFailed":
        yield from call(context, ALERT_OPERATOR, AlertOperatorInput(
            kind="CompensationFailed", order_key=order_key, instance_id=iid, reason=reason))
    yield from call(context, PUBLISH_STATUS, PublishStatusInput(
        order_key=order_key, instance_id=iid, reply_to=str(begun.reply_to),
        status=StatusKind(state), reason=reason))
    return CompensationEnded(
        outcome="compensated" if state == "Compensated" else "compensationFailed",
        detail=detail)
