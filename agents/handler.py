"""The agent's request handler (SPEC A1-A5): one request in, one reply out.

An agent calls one remote service for a request: with the request's idempotency key on
every try (A2), retries and circuit breaker inside the deadline (A5), no call started after
the deadline (A3). It never recovers a workflow: whatever happens, it only replies, and the
scheduler and supervisor decide what comes next (A3, V3). The reply's MessageId is derived
from the request's, so a redelivered request that is handled again replies with the same id
and the reply queue drops the duplicate (A4).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta

from agents.remote_call import OutcomeKind, RemoteRequest, call_remote
from azurekit.services import catalogue
from orders.lifecycle.ids import reply_message_id
from orders.messaging import OutgoingMessage
from orders.models import wire
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest
from orders.names import AGENT_REPLIES_QUEUE, REQUEST_QUEUES
from orders.observability.metrics import record_agent_call, record_circuit_state
from orders.runtime import Services

log = logging.getLogger("orders.agents")

ENDPOINTS = {op: ("POST", spec.path) for service in catalogue().services.values()
             for op, spec in service.operations.items()}
"""HTTP method and path of each operation on its service (``infra/services.json``).

Fixed paths: identifiers (OrderID, the forward request's idempotency key) travel in the
JSON body, never in the URL, so no data can steer a request (an OrderID ``..`` in a path
would be normalised away by the HTTP client, turning a refund into another request)."""

_OUTCOMES = {
    OutcomeKind.SUCCEEDED: AgentOutcome.SUCCEEDED,
    OutcomeKind.PERMANENT_FAILURE: AgentOutcome.PERMANENT_FAILURE,
    OutcomeKind.TRANSIENT_EXHAUSTED: AgentOutcome.TRANSIENT_FAILURE,
    OutcomeKind.CIRCUIT_OPEN: AgentOutcome.TRANSIENT_FAILURE,
}


SERVICE_MISMATCH = "ServiceMismatch"
"""Dead-letter reason of a request whose service, operation or reply queue is not its
queue's: the queue an agent serves decides which service it calls and where it replies."""

SERVICE_OF_QUEUE = {queue: service for service, queue in REQUEST_QUEUES.items()}
"""The service each request queue is for (SPEC A1: one agent per remote service)."""

OPERATIONS_OF_SERVICE = {name: frozenset(spec.operations)
                         for name, spec in catalogue().services.items()}
"""The operations each service performs (``infra/services.json``)."""


def parse_request(body: bytes, queue: str) -> AgentRequest:
    """Parse an agent request body strictly (SPEC A1); never raise anything else for it.

    Parameters
    ----------
    body : bytes
        The message body.
    queue : str
        The request queue it arrived on, which names the service (:data:`SERVICE_OF_QUEUE`).

    Raises
    ------
    orders.models.wire.InvalidMessage
        For every form of bad body, as :func:`orders.models.wire.parse` raises it, with
        "agent request" before its description; ``ServiceMismatch`` for a request whose
        ``service`` is not the queue's, whose ``operation`` that service does not
        perform, or whose ``replyTo`` is not the agents' reply queue
        (``agent-replies``). The caller dead-letters the message on its first delivery.
    """
    request = wire.parse(body, AgentRequest, what="agent request")
    service = catalogue().service_of_queue(queue)
    problems = []
    if request.service != service:
        problems.append(f"service: {request.service!r} is not the service of queue "
                        f"'{queue}' ({service!r})")
    elif request.operation not in OPERATIONS_OF_SERVICE[service]:
        problems.append(f"operation: {request.operation!r} is not an operation of the "
                        f"{service} service ({', '.join(sorted(OPERATIONS_OF_SERVICE[service]))})")
    if request.reply_to.casefold() != AGENT_REPLIES_QUEUE:
        problems.append(f"replyTo: {request.reply_to[:64]!r} is not the agents' reply queue "
                        f"'{AGENT_REPLIES_QUEUE}'")
    if problems:
        raise wire.InvalidMessage(SERVICE_MISMATCH, "agent request: " + "; ".join(problems)
                                  + "; the queue decides the service and the reply queue")
    return request


def service_url(services: Services, request: AgentRequest) -> str:
    """Return the URL of the request's operation on its service.

    Raises
    ------
    azurekit.services.UnknownServiceError
        If the service or the operation is not in ``infra/services.json``: never a default.
    """
    path = catalogue().operation(request.service, request.operation).path
    return services.settings.service_url(request.service).rstrip("/") + path


def handle(request: AgentRequest, services: Services,
           sleep: Callable[[float], None] = time.sleep, *,
           delivery_count: int = 1) -> AgentReply:
    """Call the remote service for ``request`` and build the reply.

    Parameters
    ----------
    request : AgentRequest
        The scheduler's request.
    services : Services
        HTTP client, breakers, clock and settings.
    sleep : callable
        Waits between retries (seconds); tests advance a ManualClock instead.
    delivery_count : int
        Service Bus delivery of the request, 1 for the first. Only a first delivery can
        vouch that no call was made for the request (an earlier one may have called and
        then crashed), so only then does an open circuit set ``circuit_open``.

    Returns
    -------
    AgentReply
        Succeeded, PermanentFailure (4xx) or TransientFailure (retries, deadline or open
        circuit exhausted: the scheduler may try again in a later attempt). A
        TransientFailure with ``circuit_open`` made no call at all (SPEC A5, V2).
    """
    method, _ = ENDPOINTS[request.operation]
    remote = RemoteRequest(service=request.service, method=method,
                           url=service_url(services, request),
                           idempotency_key=request.idempotency_key, json=request.payload,
                           order_id=request.order_id)
    outcome = call_remote(services.http, remote, deadline=request.complete_by,
                          max_attempts=request.max_attempts,
                          breaker=services.breakers.get(request.service),
                          clock=services.clock, sleep=sleep,
                          attempt_timeout=timedelta(
                              seconds=services.settings.AGENT_CALL_TIMEOUT_S))
    breaker_state = services.breakers.get(request.service).state
    record_agent_call(request.service, outcome.attempts, _OUTCOMES[outcome.kind].value,
                      request.operation)
    record_circuit_state(request.service, breaker_state.value)
    body = outcome.body if isinstance(outcome.body, dict) else None
    result = body if outcome.succeeded else None
    error_code = body.get("error") if body is not None and not outcome.succeeded else None
    refused = (outcome.kind is OutcomeKind.CIRCUIT_OPEN and outcome.attempts == 0
               and delivery_count <= 1)
    return AgentReply(message_id=reply_message_id(request.message_id), order_id=request.order_id,
                      instance_id=request.instance_id, operation=request.operation,
                      event_name=request.event_name, outcome=_OUTCOMES[outcome.kind],
                      attempts=outcome.attempts, circuit_open=refused,
                      retry_at=outcome.retry_at if refused else None,
                      status_code=outcome.status_code,
                      error_code=error_code[:128] if isinstance(error_code, str) else None,
                      result=result, reason=outcome.reason)


def reply(services: Services, request: AgentRequest, answer: AgentReply) -> None:
    """Send the reply to the agents' reply queue with its stable MessageId (SPEC A4).

    The queue is the request queue's pair, ``agent-replies``; :func:`parse_request` has
    refused a request naming another.
    """
    services.sender.send(AGENT_REPLIES_QUEUE, OutgoingMessage(
        body=answer.model_dump(mode="json"), message_id=answer.message_id,
        correlation_id=request.message_id,
        application_properties={"orderId": answer.order_id,
                                "outcome": answer.outcome.value}))
