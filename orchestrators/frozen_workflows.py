"""The frozen order workflow versions 1 to 8: orders in flight finish on them (S4-S7, X6).

Frozen: an order runs the version its first attempt started with, and a replay of its
history must schedule exactly what it recorded, so nothing here changes what it schedules
(docs/pipeline.md, "The order workflow"); new work goes into the live versions
(:mod:`orchestrators.live_workflow`). Versions 1 (reserve, charge, ship) and 2 ("charge on
dispatch": reserve, ship, charge) run each step as its own activities (:func:`run_steps`);
3 and 4 run the same effects in the same order in 5 activities instead of 10, 5 and 6 in
4, and 7 and 8 in 3 with one durable timer per attempt (:func:`run_merged`). Each remote
step races the agent's reply against a durable timer at CompleteBy
(:mod:`orchestrators.agent_steps`). Deterministic: context time only, no I/O, settings in the
input; logs only when not replaying (D4).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from datetime import datetime, timedelta
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.agent_steps import (
    Confirmed,
    await_reply,
    close_deadline,
    confirmed_step,
    forward_step,
    open_deadline,
    remote_step,
)
from orchestrators.attempt_ends import Attempt, fail, left_for_supervisor
from orchestrators.calls import call, call_built
from orders.models import Step
from orders.models.activities import (
    BEGIN_ATTEMPT,
    FINISH_ATTEMPT,
    LOAD_ORDER,
    PUBLISH_STATUS,
    RECORD_STEP,
    RESERVE_INVENTORY,
    ActivityResultError,
)
from orders.models.attempt_io import (
    BeginAttemptInput,
    BeginAttemptResult,
    FinishAttemptInput,
    FirstRequest,
    OrderWorkflowInput,
    Processed,
    ReserveInventoryInput,
    ReserveInventoryResult,
)
from orders.models.compensation_io import RecordStepInput
from orders.models.memo import Same
from orders.models.messages import AgentOutcome, StatusKind
from orders.models.notice_io import PublishStatusInput
from orders.models.step_io import Superseded
from orders.remote_steps import WORKFLOW_STEPS, RemoteStep

RemoteSteps = tuple[RemoteStep, ...]

REMOTE_STEPS: RemoteSteps = WORKFLOW_STEPS[1]
REMOTE_STEPS_V2: RemoteSteps = WORKFLOW_STEPS[2]
REMOTE_STEPS_V3: RemoteSteps = WORKFLOW_STEPS[3]
REMOTE_STEPS_V4: RemoteSteps = WORKFLOW_STEPS[4]
REMOTE_STEPS_V5: RemoteSteps = WORKFLOW_STEPS[5]
REMOTE_STEPS_V6: RemoteSteps = WORKFLOW_STEPS[6]
REMOTE_STEPS_V7: RemoteSteps = WORKFLOW_STEPS[7]
REMOTE_STEPS_V8: RemoteSteps = WORKFLOW_STEPS[8]


def run_steps(context: DurableOrchestrationContext, data: OrderWorkflowInput,
              remote_steps: RemoteSteps) -> Attempt:
    """Run one attempt: reserve, then ``remote_steps`` in order (S4-S7).

    Raises
    ------
    ValueError
        If an activity's result (:class:`~orders.models.activities.ActivityResultError`)
        or a reply (``pydantic.ValidationError``) breaks its contract (the instance fails).
    """
    order_key, iid = data.order_key, context.instance_id
    deadline = context.current_utc_datetime + timedelta(seconds=data.deadline_s)
    begun = yield from call(context, BEGIN_ATTEMPT, BeginAttemptInput(
        order_key=order_key, instance_id=iid, complete_by=deadline))
    if begun.fenced:
        return Superseded()
    reply_to = str(begun.reply_to)
    order = yield from call(context, LOAD_ORDER, order_key)
    reservation = yield from call(context, RESERVE_INVENTORY, ReserveInventoryInput(
        order_key=order_key, lines=order.lines))
    if reservation.out_of_stock is not None:
        # Only a history whose reservation result says so takes this branch: every
        # history recorded before it has none (X6).
        return (yield from fail(context, order_key, reply_to, RESERVE_INVENTORY.name,
                                reservation.out_of_stock.reason()))
    yield from record_step(context, data, Step.RESERVE_INVENTORY, reservation)
    for step in remote_steps:
        operation = step.operation
        request = step.request(iid, order, deadline, data.agent_max_attempts)
        reply = yield from remote_step(context, request, deadline, data.workflow_version)
        if reply is None or reply.outcome is AgentOutcome.TRANSIENT_FAILURE:
            return left_for_supervisor(context, order_key, operation, reply)
        if reply.outcome is AgentOutcome.PERMANENT_FAILURE:
            return (yield from fail(context, order_key, reply_to, operation, reply.reason))
        if step.log_step is not None:
            yield from record_step(context, data, step.log_step, reply.result)
    done = yield from call(context, FINISH_ATTEMPT, FinishAttemptInput(
        order_key=order_key, instance_id=iid, state="Processed"))
    if done.fenced:
        return Superseded()
    yield from call(context, PUBLISH_STATUS, PublishStatusInput(
        order_key=order_key, instance_id=iid, reply_to=reply_to,
        status=StatusKind.ORDER_COMPLETED))
    return Processed()


def record_step(context: DurableOrchestrationContext, data: OrderWorkflowInput, step: Step,
                result: ReserveInventoryResult | dict[str, Any] | None,
                ) -> Generator[Any, Any, None]:
    """Write the compensation log entry of a completed step (S9)."""
    if isinstance(result, ReserveInventoryResult):
        result = result.model_dump(mode="json")
    yield from call(context, RECORD_STEP, RecordStepInput(
        order_key=data.order_key, instance_id=context.instance_id,
        workflow_version=data.workflow_version, step=step, result=result))


def run_v1(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 1: reserve -> charge -> ship (see :func:`run_steps`)."""
    return (yield from run_steps(context, data, REMOTE_STEPS))


def run_v2(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 2, charge on dispatch: reserve -> ship -> charge (see :func:`run_steps`)."""
    return (yield from run_steps(context, data, REMOTE_STEPS_V2))


def run_merged(context: DurableOrchestrationContext, data: OrderWorkflowInput,
               remote_steps: RemoteSteps, *, begin_reserves: bool = False,
               begin_sends: bool = False) -> Attempt:
    """Run one attempt as :func:`run_steps` does, in fewer activities (versions 3 to 8, X6).

    Each confirmed step is logged by the next activity (``send_agent_request``, or
    ``finish_attempt``, which also tells the client); with ``begin_reserves`` (versions 5
    to 8) ``begin_attempt`` also reserves the lines, and with ``begin_sends`` (versions 7,
    8) also sends the first remote step, every reply then raced against one timer at
    CompleteBy (on Azure a deadline passing during the second step does not end its wait:
    docs/pipeline.md, "The order workflow").
    Every replay builds the same inputs again, so each input built from the attempt's own
    values is built once per process (:func:`~orchestrators.calls.call_built`).
    """
    order_key, iid, version = data.order_key, context.instance_id, data.workflow_version
    deadline = context.current_utc_datetime + timedelta(seconds=data.deadline_s)
    first = remote_steps[0] if begin_sends else None
    begun = yield from begin(context, data, deadline, begin_reserves, first)
    if begun.fenced:
        return Superseded()
    reply_to, order = str(begun.reply_to), begun.order
    assert order is not None, "begin checks it"
    reservation = begun.reservation if begin_reserves else None
    if reservation is None:
        reservation = yield from call_built(
            context, RESERVE_INVENTORY, (order_key, Same(order)),
            lambda: ReserveInventoryInput(order_key=order_key, lines=order.lines))
    if reservation.out_of_stock is not None:
        return (yield from fail(context, order_key, reply_to, RESERVE_INVENTORY.name,
                                reservation.out_of_stock.reason()))
    timer = open_deadline(context, deadline) if begin_sends else None
    confirmed: Confirmed | None = None
    for step in remote_steps:
        try:
            if step is first:  # sent by begin_attempt
                reply = yield from await_reply(context, step.reply_event, deadline, timer)
            else:
                reply = yield from forward_step(context, step, order, deadline,
                                                data.agent_max_attempts, version, confirmed,
                                                timer)
        except Exception:  # a failed send or a broken reply fails the instance: no timer left
            close_deadline(timer)
            raise
        if reply is not None:
            close_deadline(timer if reply.outcome is not AgentOutcome.SUCCEEDED else None)
        if reply is None or reply.outcome is AgentOutcome.TRANSIENT_FAILURE:
            return left_for_supervisor(context, order_key, step.operation, reply)
        if reply.outcome is AgentOutcome.PERMANENT_FAILURE:
            return (yield from fail(context, order_key, reply_to, step.operation, reply.reason))
        confirmed = None if step.log_step is None else (step.log_step, reply.result)
    close_deadline(timer)
    done = yield from call(context, FINISH_ATTEMPT, FinishAttemptInput(
        order_key=order_key, instance_id=iid, state="Processed",
        confirmed=confirmed_step(confirmed),
        workflow_version=version if confirmed is not None else None, reply_to=reply_to))
    return Superseded() if done.fenced else Processed()


def begin(context: DurableOrchestrationContext, data: OrderWorkflowInput, deadline: datetime,
          reserve: bool, first: RemoteStep | None) -> Generator[Any, Any, BeginAttemptResult]:
    """Schedule ``begin_attempt`` of a merged version: load the order, maybe reserve and send.

    Raises
    ------
    ActivityResultError
        If the attempt owns the record but the result lacks what was asked: the order, the
        reservation, or the first request's MessageId with every line held.
    """
    order_key, iid = data.order_key, context.instance_id
    most = data.agent_max_attempts
    begun = yield from call_built(
        context, BEGIN_ATTEMPT, (order_key, iid, deadline, True, reserve or None, first, most),
        lambda: BeginAttemptInput(
            order_key=order_key, instance_id=iid, complete_by=deadline, load_order=True,
            reserve=True if reserve else None,
            send_first=None if first is None else FirstRequest(
                service=first.service, operation=first.operation, max_attempts=most)))
    if begun.fenced:
        return begun
    held = begun.reservation is not None and begun.reservation.out_of_stock is None
    missing = ("order" if begun.order is None else
               "reservation" if reserve and begun.reservation is None else
               "sent" if first is not None and held and begun.sent is None else None)
    if missing is not None:
        raise ActivityResultError(f"activity {BEGIN_ATTEMPT.name}: {missing}: required when "
                                  "asked and the attempt owns the record")
    return begun


def run_v3(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 3: version 1's steps in fewer activities (see :func:`run_merged`)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V3))


def run_v4(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 4: version 2's steps in fewer activities (see :func:`run_merged`)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V4))


def run_v5(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 5: version 3 with the reservation made by ``begin_attempt`` (4 activities)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V5, begin_reserves=True))


def run_v6(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 6: version 4 with the reservation made by ``begin_attempt`` (4 activities)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V6, begin_reserves=True))


def run_v7(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 7: version 5 with the charge sent by ``begin_attempt`` (3 activities, 1 timer)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V7, begin_reserves=True,
                                  begin_sends=True))


def run_v8(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 8: version 6 with the shipment sent by ``begin_attempt`` (3 activities, 1 timer)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V8, begin_reserves=True,
                                  begin_sends=True))


FROZEN_WORKFLOWS: dict[int, Callable[[DurableOrchestrationContext, OrderWorkflowInput],
                                      Attempt]] = {
    1: run_v1, 2: run_v2, 3: run_v3, 4: run_v4, 5: run_v5, 6: run_v6, 7: run_v7, 8: run_v8}
"""The frozen versions by number (X6)."""
