"""The live order workflow: versions 9 and 10, the ones new orders start on (S4-S7, A4, X6).

One attempt of one order in three activities: ``begin_attempt`` loads the order, reserves
its lines and sends the first remote step; each later step is sent by
``send_agent_request``, which first logs the step before it as confirmed; each reply is
acted on only if it answers the attempt's outstanding request, raced against its own
durable timer at CompleteBy; ``finish_attempt`` logs the last step, writes Processed and
tells the client. Version 9 charges then ships; version 10 ("charge on dispatch") ships
then charges. The steps of each version: :data:`orders.names.WORKFLOW_REMOTE_STEPS`.

This is the module a change to the workflow goes into. Once orders run under a version it
is frozen (X6): move it to :mod:`orchestrators.frozen_workflows` unchanged and register a
new live version (docs/deploy.md, "Rolling out a new workflow version"). Deterministic:
context time only, no I/O, settings in the input; logs only when not replaying (D4).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from datetime import datetime, timedelta
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.agent_steps import (
    Confirmed,
    Outstanding,
    await_bound_reply,
    confirmed_step,
    send_step,
)
from orchestrators.attempt_ends import Attempt, fail, left_for_supervisor
from orchestrators.calls import call, call_built
from orders.models.activities import (
    BEGIN_ATTEMPT,
    FINISH_ATTEMPT,
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
)
from orders.models.messages import AgentOutcome
from orders.models.step_io import Superseded
from orders.remote_steps import WORKFLOW_STEPS, RemoteStep


def run_live(context: DurableOrchestrationContext, data: OrderWorkflowInput,
             steps: tuple[RemoteStep, ...]) -> Attempt:
    """Run one attempt: begin (reserve, send ``steps[0]``), each step's reply, finish.

    A timer first, a transient failure or :data:`~orchestrators.agent_steps.MAX_IGNORED_REPLIES`
    ignored replies leave the attempt to the supervisor, the record untouched (S6); a
    permanent failure fails the order (S7); an attempt that no longer owns the record ends
    ``superseded``.

    Raises
    ------
    ValueError
        If an activity's result breaks its contract
        (:class:`~orders.models.activities.ActivityResultError`; the instance fails).
    """
    order_key, iid, version = data.order_key, context.instance_id, data.workflow_version
    deadline = context.current_utc_datetime + timedelta(seconds=data.deadline_s)
    begun = yield from begin(context, data, deadline, steps[0])
    if begun.fenced:
        return Superseded()
    reply_to, order, reservation = str(begun.reply_to), begun.order, begun.reservation
    assert order is not None and reservation is not None, "begin checks them"
    if reservation.out_of_stock is not None:
        return (yield from fail(context, order_key, reply_to, RESERVE_INVENTORY.name,
                                reservation.out_of_stock.reason()))
    confirmed: Confirmed | None = None
    for step in steps:
        if step is not steps[0]:  # the first was sent by begin_attempt
            yield from send_step(context, step, order, deadline, data.agent_max_attempts,
                                 version, confirmed)
        reply = yield from await_bound_reply(
            context, Outstanding.of(iid, order_key, step.operation), deadline)
        if reply is None or reply.outcome is AgentOutcome.TRANSIENT_FAILURE:
            return left_for_supervisor(context, order_key, step.operation, reply)
        if reply.outcome is AgentOutcome.PERMANENT_FAILURE:
            return (yield from fail(context, order_key, reply_to, step.operation, reply.reason))
        confirmed = None if step.log_step is None else (step.log_step, reply.result)
    done = yield from call(context, FINISH_ATTEMPT, FinishAttemptInput(
        order_key=order_key, instance_id=iid, state="Processed",
        confirmed=confirmed_step(confirmed),
        workflow_version=version if confirmed is not None else None, reply_to=reply_to))
    return Superseded() if done.fenced else Processed()


def begin(context: DurableOrchestrationContext, data: OrderWorkflowInput, deadline: datetime,
          first: RemoteStep) -> Generator[Any, Any, BeginAttemptResult]:
    """Schedule ``begin_attempt``: load the order, reserve its lines, send ``first``.

    Every replay builds the same input again, so it is built once per process
    (:func:`~orchestrators.calls.call_built`).

    Raises
    ------
    ActivityResultError
        If the attempt owns the record but the result lacks the order, the reservation, or
        the first request's MessageId with every line held.
    """
    order_key, iid, most = data.order_key, context.instance_id, data.agent_max_attempts
    begun = yield from call_built(
        context, BEGIN_ATTEMPT, (order_key, iid, deadline, first, most),
        lambda: BeginAttemptInput(
            order_key=order_key, instance_id=iid, complete_by=deadline, load_order=True,
            reserve=True, send_first=FirstRequest(
                service=first.service, operation=first.operation, max_attempts=most)))
    if begun.fenced:
        return begun
    reservation = begun.reservation
    missing = ("order" if begun.order is None else
               "reservation" if reservation is None else
               "sent" if reservation.out_of_stock is None and begun.sent is None else None)
    if missing is not None:
        raise ActivityResultError(f"activity {BEGIN_ATTEMPT.name}: {missing}: required when "
                                  "the attempt owns the record")
    return begun


def run_v9(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 9: reserve, charge, ship (see :func:`run_live`)."""
    return (yield from run_live(context, data, WORKFLOW_STEPS[9]))


def run_v10(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> Attempt:
    """Version 10, charge on dispatch: reserve, ship, charge (see :func:`run_live`)."""
    return (yield from run_live(context, data, WORKFLOW_STEPS[10]))


LIVE_WORKFLOWS: dict[int, Callable[[DurableOrchestrationContext, OrderWorkflowInput],
                                   Attempt]] = {9: run_v9, 10: run_v10}
"""The live versions by number (X6)."""
