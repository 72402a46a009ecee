"""A remote step: send a request to its agent and race the reply against CompleteBy (S6)."""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.calls import call
from orders.models.activities import RESULTS, SEND_AGENT_REQUEST
from orders.models.agent_io import SendAgentRequestInput
from orders.models.compensation_io import ConfirmedStep
from orders.models.messages import AgentReply, AgentRequest


def remote_step(context: DurableOrchestrationContext, request: AgentRequest, deadline: datetime,
                workflow_version: int | None = None, confirmed: ConfirmedStep | None = None,
                ) -> Generator[Any, Any, AgentReply | None]:
    """Send a request to its agent and race the reply against the deadline (S6).

    ``workflow_version`` goes into the *requested* log entry the send activity writes before
    a forward request goes out (None for an undo); ``confirmed`` is the previous step's entry,
    written first (versions 3, 4). Returns the reply, or None if the timer fired first (a
    late reply is then ignored).

    Raises
    ------
    pydantic.ValidationError
        If the raised event is not an agent reply (the instance then fails).
    """
    yield from call(context, SEND_AGENT_REQUEST,
                    SendAgentRequestInput.of(request, workflow_version, confirmed))
    reply = context.wait_for_external_event(request.event_name)
    timer = context.create_timer(deadline)
    winner = yield context.task_any([reply, timer])
    if winner == reply:
        timer.cancel()  # type: ignore[attr-defined]  # a TimerTask, annotated TaskBase
        return read_reply(reply.result)
    return None


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
