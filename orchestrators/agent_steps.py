"""A remote step: send a request to its agent and race the reply against CompleteBy (S6)."""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from azure.durable_functions import DurableOrchestrationContext
from azure.durable_functions.models.Task import TimerTask
from pydantic import ValidationError

from orchestrators.calls import call, call_built
from orders.lifecycle.ids import idempotency_key, reply_event_name, request_message_id
from orders.models import Order, Step
from orders.models.activities import RESULTS, SEND_AGENT_REQUEST
from orders.models.agent_io import SendAgentRequestInput
from orders.models.compensation_io import ConfirmedStep
from orders.models.memo import Same, value_key
from orders.models.messages import AgentReply, AgentRequest
from orders.observability.logs import replay_safe_logger
from orders.observability.metrics import record_ignored_reply
from orders.remote_steps import RemoteStep

log = logging.getLogger("orders.workflow")

MAX_IGNORED_REPLIES = 5
"""Replies a wait ignores (they answer no outstanding request) before it gives up: the
attempt then ends as timed out, left for the supervisor (A4, S6)."""


@dataclass(frozen=True)
class Outstanding:
    """The request a wait expects an answer to (the live workflow versions, A4).

    A reply is bound to it by the request's MessageId, the attempt (instance id), the
    order, the operation, the idempotency key and the event name, all echoed by the agent.
    """

    request_id: str
    instance_id: str
    order_key: str
    operation: str
    idempotency_key: str

    @classmethod
    def of(cls, instance_id: str, order_key: str, operation: str) -> Outstanding:
        """Return the forward request of ``operation`` in attempt ``instance_id`` (as sent)."""
        return cls(request_message_id(instance_id, operation), instance_id, order_key,
                   operation, idempotency_key(order_key, operation))

    def answered_by(self, reply: AgentReply) -> bool:
        """Whether ``reply`` answers this request."""
        return (reply.request_id == self.request_id
                and reply.idempotency_key == self.idempotency_key
                and reply.instance_id == self.instance_id
                and reply.order_key == self.order_key
                and reply.operation == self.operation
                and reply.event_name == reply_event_name(self.operation))

    @classmethod
    def sent(cls, request: AgentRequest) -> Outstanding:
        """Return the request ``request`` as a wait expects its answer (an undo's, S9)."""
        return cls(request.message_id, request.instance_id, request.order_key,
                   request.operation, request.idempotency_key)

Confirmed = tuple[Step, dict[str, Any] | None]
"""A confirmed step's log entry as its parts: the step and the agent's result."""


def remote_step(context: DurableOrchestrationContext, request: AgentRequest, deadline: datetime,
                workflow_version: int | None = None, confirmed: ConfirmedStep | None = None,
                ) -> Generator[Any, Any, AgentReply | None]:
    """Send a request to its agent and race the reply against the deadline (S6).

    ``workflow_version`` goes into the *requested* log entry the send activity writes before
    a forward request goes out (None for an undo); ``confirmed`` is the previous step's entry,
    written first (versions 3 to 6). Returns the reply, or None if the timer fired first (a
    late reply is then ignored).

    Raises
    ------
    pydantic.ValidationError
        If the raised event is not an agent reply (the instance then fails).
    """
    yield from call(context, SEND_AGENT_REQUEST,
                    SendAgentRequestInput.of(request, workflow_version, confirmed))
    return (yield from await_reply(context, request.event_name, deadline))


def bound_remote_step(context: DurableOrchestrationContext, request: AgentRequest,
                      deadline: datetime) -> Generator[Any, Any, AgentReply | None]:
    """Send an undo request and race replies bound to it against the deadline (S9, A4).

    As :func:`remote_step` of an undo (no log entry is written before the send), but the
    wait is :func:`await_bound_reply`: a reply answering another request, a forged one, or
    no agent reply at all is ignored instead of acted on. For a genuine reply the actions
    are those :func:`remote_step` schedules (the send, then one external event wait raced
    against its own timer at ``deadline``), so histories of compensation attempts that
    waited with :func:`remote_step` replay unchanged. Returns the reply, or None if the
    timer fired first or the wait gave up (:data:`MAX_IGNORED_REPLIES`).
    """
    yield from call(context, SEND_AGENT_REQUEST, SendAgentRequestInput.of(request, None, None))
    return (yield from await_bound_reply(context, Outstanding.sent(request), deadline))


def forward_step(context: DurableOrchestrationContext, step: RemoteStep, order: Order,
                 deadline: datetime, max_attempts: int, workflow_version: int,
                 confirmed: Confirmed | None, timer: TimerTask | None = None,
                 ) -> Generator[Any, Any, AgentReply | None]:
    """Run :func:`remote_step` of ``step.request(...)``, the send's input built once per value.

    The same as ``remote_step(context, step.request(context.instance_id, order, deadline,
    max_attempts), deadline, workflow_version, ConfirmedStep(...))`` (:func:`send_step`, then
    :func:`await_reply`). ``timer``: the attempt's one timer at CompleteBy (versions 7, 8),
    as :func:`await_reply` takes it.

    Raises
    ------
    pydantic.ValidationError
        If the request breaks its contract, or the raised event is not an agent reply.
    """
    yield from send_step(context, step, order, deadline, max_attempts, workflow_version,
                         confirmed)
    return (yield from await_reply(context, step.reply_event, deadline, timer))


def send_step(context: DurableOrchestrationContext, step: RemoteStep, order: Order,
              deadline: datetime, max_attempts: int, workflow_version: int,
              confirmed: Confirmed | None) -> Generator[Any, Any, None]:
    """Schedule ``send_agent_request`` of ``step.request(...)``, its input built once per value.

    The input scheduled is byte-identical to ``SendAgentRequestInput.of(step.request(
    context.instance_id, order, deadline, max_attempts), workflow_version,
    confirmed_step(confirmed))``, but a replay that has built it before reads its text
    (:func:`~orchestrators.calls.call_built`; ``order``, frozen, by identity, the confirmed
    result by :func:`~orders.models.memo.value_key`).

    Raises
    ------
    pydantic.ValidationError
        If the request breaks its contract.
    """
    iid = context.instance_id
    key = (step, iid, Same(order), deadline, max_attempts, workflow_version,
           None if confirmed is None else (confirmed[0], value_key(confirmed[1])))

    def build() -> SendAgentRequestInput:
        return SendAgentRequestInput.of(step.request(iid, order, deadline, max_attempts),
                                        workflow_version, confirmed_step(confirmed))

    yield from call_built(context, SEND_AGENT_REQUEST, key, build)


def confirmed_step(confirmed: Confirmed | None) -> ConfirmedStep | None:
    """Return the log entry of a confirmed step from its parts (None: nothing confirmed)."""
    return None if confirmed is None else ConfirmedStep(step=confirmed[0], result=confirmed[1])


def await_reply(context: DurableOrchestrationContext, event_name: str, deadline: datetime,
                timer: TimerTask | None = None) -> Generator[Any, Any, AgentReply | None]:
    """Race the reply event ``event_name`` against a timer at ``deadline`` (S6).

    Without ``timer`` (versions 1 to 6) each wait creates its own timer and cancels it when
    the reply wins. With it (versions 7, 8: one durable timer at CompleteBy for the whole
    attempt, created by the orchestrator, :func:`open_deadline`) the pending timer joins
    this race too: the SDK's ``task_any`` adopts a task it has scheduled before without
    scheduling it again (``CompoundTask`` in ``azure/durable_functions/models/Task.py``), and
    a timer that already fired wins at once. The caller cancels it (:func:`close_deadline`).
    Returns the reply, or None if the timer fired first.

    Raises
    ------
    pydantic.ValidationError
        If the raised event is not an agent reply (the instance then fails).
    """
    reply = context.wait_for_external_event(event_name)
    race_timer = open_deadline(context, deadline) if timer is None else timer
    winner = yield context.task_any([reply, race_timer])
    if winner == reply:
        if timer is None:  # this race's own timer
            close_deadline(race_timer)
        return read_reply(reply.result)
    return None


def await_bound_reply(context: DurableOrchestrationContext, expected: Outstanding,
                      deadline: datetime) -> Generator[Any, Any, AgentReply | None]:
    """Race replies to ``expected`` against a timer at ``deadline`` (versions 9, 10; A4, S6).

    Each race has its own durable timer at ``deadline``, cancelled when a reply wins, as
    :func:`await_reply` makes it without ``timer``: a timer raced again would be left out of
    the second race's ``WhenAny`` by the SDK (``CompoundTask`` in
    ``azure/durable_functions/models/Task.py`` keeps only children not yet scheduled), and
    the extension's out-of-process shim awaits that ``WhenAny``, so on Azure its firing would
    not end the wait. A reply raised on the event that does not answer ``expected``
    (another request's, an earlier attempt's, a forged one, or no agent reply at all) is
    ignored: a WARNING (not when replaying) and ``agent.replies.ignored``, then the wait goes
    on, up to :data:`MAX_IGNORED_REPLIES`; past them the wait gives up as if timed out.
    Returns the reply, or None if the timer fired first or the wait gave up.
    """
    event = reply_event_name(expected.operation)
    for _ in range(MAX_IGNORED_REPLIES):
        reply_task = context.wait_for_external_event(event)
        timer = open_deadline(context, deadline)
        winner = yield context.task_any([reply_task, timer])
        if winner != reply_task:
            return None
        close_deadline(timer)
        reply = _bound_reply(reply_task.result, expected)
        if reply is not None:
            return reply
        replay_safe_logger(context, log, expected.order_key).warning(
            "%s: a reply on %s answers no outstanding request of attempt %s; ignored",
            expected.operation, event, expected.instance_id)
        if not context.is_replaying:
            record_ignored_reply(expected.operation)
    return None


def _bound_reply(result: Any, expected: Outstanding) -> AgentReply | None:
    """Return the agent reply in ``result`` if it answers ``expected``; else None."""
    try:
        reply = read_reply(result)
    except ValidationError:
        return None
    return reply if expected.answered_by(reply) else None


def open_deadline(context: DurableOrchestrationContext, deadline: datetime) -> TimerTask:
    """Create a durable timer at CompleteBy: a race's own, or the attempt's one (versions 7, 8).

    It is scheduled when first raced (:func:`await_reply`).
    """
    return cast(TimerTask, context.create_timer(deadline))


def close_deadline(timer: TimerTask | None) -> None:
    """Cancel a timer unless it fired (or there is none).

    Called when its reply won, or (the attempt's one timer) when the attempt goes on without
    a reply to race, or ends. The local host then
    deletes the timer's message; on Azure the Durable Task Framework lets it fire into the
    instance, which ignores it.
    """
    if timer is not None and not timer.is_completed:
        timer.cancel()  # type: ignore[no-untyped-call]  # the SDK's method, unannotated


def read_reply(result: Any) -> AgentReply:
    """Read an external event's result as the agent reply.

    The Durable extension stores the SDK's ``raise_event`` body (the reply's JSON text sent as
    a JSON string) as the event's data, so on Azure the event yields the JSON *text*
    (azure-functions-durable-python#295); an object (a client that sent the JSON itself) is
    read as it is.

    Raises
    ------
    pydantic.ValidationError
        If the result is not an agent reply.
    """
    if isinstance(result, str):
        return RESULTS.get((AgentReply, result), lambda: AgentReply.model_validate_json(result),
                           weight=len(result))
    return AgentReply.model_validate(result)
