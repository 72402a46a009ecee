"""The order workflow: one attempt of one order, in every registered version (S4-S7, X6).

Versions 1 (reserve, charge, ship) and 2 ("charge on dispatch": reserve, ship, charge) run
each step as its own activities (:func:`run_steps`); 3 and 4 run the same effects in the
same order in 5 activities instead of 10, 5 and 6 in 4, and 7 and 8 in 3 with one durable
timer per attempt (:func:`run_merged`); 9 and 10 are 7 and 8 acting only on a reply bound
to the attempt's outstanding request. Which version an attempt runs, what each outcome
does to the record and why a version is frozen once orders run under it:
docs/pipeline.md, "The order workflow". Each remote step races the agent's reply against a
durable timer at CompleteBy (:mod:`orchestrators.remote`).
Deterministic: context time only, no I/O, settings in the input; logs only when not
replaying (D4).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from datetime import datetime, timedelta
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.calls import call, call_built
from orchestrators.remote import (
    Confirmed,
    Outstanding,
    await_bound_reply,
    await_reply,
    close_deadline,
    confirmed_step,
    forward_step,
    open_deadline,
    remote_step,
)
from orders.compensation.remote import WORKFLOW_STEPS, RemoteStep
from orders.lifecycle.ids import workflow_version_of
from orders.models import Order, Step
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FAIL_ORDER,
    FINISH_ATTEMPT,
    LOAD_ORDER,
    PUBLISH_STATUS,
    RECORD_STEP,
    RESERVE_INVENTORY,
    ActivityResultError,
)
from orders.models.attempt_io import (
    AttemptOutcome,
    BeginAttemptInput,
    BeginAttemptResult,
    Failed,
    FinishAttemptInput,
    FirstRequest,
    OrderWorkflowInput,
    Processed,
    ReserveInventoryInput,
    ReserveInventoryResult,
    UnknownWorkflowVersion,
)
from orders.models.compensation_io import FailOrderInput, RecordStepInput
from orders.models.memo import Same
from orders.models.messages import (
    AgentOutcome,
    AgentReply,
    AgentRequest,
    Operation,
    Service,
    StatusKind,
)
from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from orders.models.step_io import LeftForSupervisor, Superseded
from orders.observability.logs import replay_safe_logger

log = logging.getLogger("orders.workflow")

RemoteSteps = tuple[RemoteStep, ...]

REMOTE_STEPS: RemoteSteps = WORKFLOW_STEPS[1]
REMOTE_STEPS_V2: RemoteSteps = WORKFLOW_STEPS[2]
REMOTE_STEPS_V3: RemoteSteps = WORKFLOW_STEPS[3]
REMOTE_STEPS_V4: RemoteSteps = WORKFLOW_STEPS[4]
REMOTE_STEPS_V5: RemoteSteps = WORKFLOW_STEPS[5]
REMOTE_STEPS_V6: RemoteSteps = WORKFLOW_STEPS[6]
REMOTE_STEPS_V7: RemoteSteps = WORKFLOW_STEPS[7]
REMOTE_STEPS_V8: RemoteSteps = WORKFLOW_STEPS[8]
REMOTE_STEPS_V9: RemoteSteps = WORKFLOW_STEPS[9]
REMOTE_STEPS_V10: RemoteSteps = WORKFLOW_STEPS[10]

Attempt = Generator[Any, Any, AttemptOutcome]
"""An attempt's generator: yields the SDK's tasks, returns the attempt's outcome."""


def agent_request(context: DurableOrchestrationContext, order: Order, service: Service,
                  operation: Operation, deadline: datetime, max_attempts: int) -> AgentRequest:
    """Build the request of one forward remote step (:meth:`RemoteStep.request`)."""
    return RemoteStep(service, operation).request(context.instance_id, order, deadline,
                                                  max_attempts)


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
               begin_sends: bool = False, bound: bool = False) -> Attempt:
    """Run one attempt as :func:`run_steps` does, in fewer activities (versions 3 to 8, X6).

    Each confirmed step is logged by the next activity (``send_agent_request``, or
    ``finish_attempt``, which also tells the client); with ``begin_reserves`` (versions 5
    to 8) ``begin_attempt`` also reserves the lines, and with ``begin_sends`` (versions 7,
    8) also sends the first remote step, every reply then raced against one timer at
    CompleteBy. With ``bound`` (versions 9, 10, with ``begin_sends``) a reply is acted on
    only if it answers the attempt's outstanding request (:func:`await_bound_reply`).
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
            if step is first and bound and timer is not None:  # sent by begin_attempt
                reply = yield from await_bound_reply(
                    context, Outstanding.of(iid, order_key, step.operation), deadline, timer)
            elif step is first:
                reply = yield from await_reply(context, step.reply_event, deadline, timer)
            else:
                reply = yield from forward_step(context, step, order, deadline,
                                                data.agent_max_attempts, version, confirmed,
                                                timer, bound=bound)
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


def left_for_supervisor(context: DurableOrchestrationContext, order_key: str, operation: str,
                        reply: AgentReply | None) -> LeftForSupervisor:
    """Timer first (``reply`` None) or a transient failure: stop, the record untouched (S6)."""
    replay_safe_logger(context, log, order_key).info(
        "%s %s; left for the supervisor", operation,
        "timed out" if reply is None else "failed transiently")
    return LeftForSupervisor(
        outcome="timedOut" if reply is None else "transientFailure", step=operation)


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


def run_v9(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 9: version 7 acting only on replies bound to their request (A4)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V9, begin_reserves=True,
                                  begin_sends=True, bound=True))


def run_v10(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 10: version 8 acting only on replies bound to their request (A4)."""
    return (yield from run_merged(context, data, REMOTE_STEPS_V10, begin_reserves=True,
                                  begin_sends=True, bound=True))


def fail(context: DurableOrchestrationContext, order_key: str, reply_to: str, operation: str,
         reason: str | None) -> Attempt:
    """Non-transient failure: alert, then compensation or Error (S7, S9).

    ``reply_to`` is told only when the order ends in Error; ``superseded`` if another
    attempt owns the record.
    """
    iid = context.instance_id
    why = f"{operation} failed permanently: {reason}"
    failed = yield from call(context, FAIL_ORDER, FailOrderInput(
        order_key=order_key, instance_id=iid, reason=f"attempt {iid}: {why}"))
    if failed.fenced:
        return Superseded()
    yield from call(context, ALERT_OPERATOR, AlertOperatorInput(
        kind="OrderError", order_key=order_key, instance_id=iid, reason=why))
    if failed.state == "Error":
        yield from call(context, PUBLISH_STATUS, PublishStatusInput(
            order_key=order_key, instance_id=iid, reply_to=reply_to,
            status=StatusKind.ORDER_FAILED, reason=why))
        return Failed(outcome="error", step=operation, reason=reason)
    return Failed(outcome="compensating", step=operation, reason=reason)


WORKFLOWS: dict[int, Callable[[DurableOrchestrationContext, OrderWorkflowInput], Attempt]] = {
    1: run_v1, 2: run_v2, 3: run_v3, 4: run_v4, 5: run_v5, 6: run_v6, 7: run_v7, 8: run_v8,
    9: run_v9, 10: run_v10}
"""Workflow versions still registered; an order runs the version it started with (X6)."""


def attempt_version(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> int:
    """Return the workflow version an attempt runs (X6): ``context.version``, else the input's."""
    from_platform = workflow_version_of(getattr(context, "version", None))
    if from_platform is not None:
        return from_platform
    return data.workflow_version


def order_workflow(
        context: DurableOrchestrationContext) -> Generator[Any, Any, dict[str, Any]]:
    """Dispatch one attempt to the workflow version its order started with (X6).

    Returns the attempt's :data:`~orders.models.attempt_io.AttemptOutcome` in JSON form; an
    unregistered version alerts and returns ``unknownWorkflowVersion``, the record untouched.

    Raises
    ------
    ValueError
        If the input or an activity's result breaks its contract (the instance fails; the
        supervisor recovers the record once CompleteBy has passed).
    """
    data = OrderWorkflowInput.model_validate(context.get_input())
    version = attempt_version(context, data)
    run = WORKFLOWS.get(version)
    if run is None:
        yield from call(context, ALERT_OPERATOR, AlertOperatorInput(
            kind="UnknownWorkflowVersion", order_key=data.order_key,
            instance_id=context.instance_id,
            reason=f"workflow version {version} is not registered; known: "
                   f"{sorted(WORKFLOWS)}"))
        return UnknownWorkflowVersion().model_dump(mode="json")
    outcome = yield from run(context, data)
    return outcome.model_dump(mode="json")
