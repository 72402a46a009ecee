"""The agent's request handler (A1-A5): one request in, one reply out.

The rules it keeps are in docs/pipeline.md, "Agents (A1-A5)".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta

from agents.remote_call import OutcomeKind, RemoteRequest, call_remote, safe_error_code
from azurekit.services import catalogue
from orders.lifecycle.ids import idempotency_key, reply_event_name, reply_message_id
from orders.messaging import OutgoingMessage
from orders.models import ProcessState, wire
from orders.models.agent_io import PAYLOADS, ForwardKeyField
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest
from orders.names import AGENT_REPLIES_QUEUE, REQUEST_QUEUES
from orders.observability.metrics import record_agent_call, record_circuit_state
from orders.runtime import Services

log = logging.getLogger("orders.agents")

ENDPOINTS = {op: ("POST", spec.path) for service in catalogue().services.values()
             for op, spec in service.operations.items()}
"""HTTP method and fixed path of each operation: identifiers travel in the body, never the URL."""

_OUTCOMES = {
    OutcomeKind.SUCCEEDED: AgentOutcome.SUCCEEDED,
    OutcomeKind.PERMANENT_FAILURE: AgentOutcome.PERMANENT_FAILURE,
    OutcomeKind.TRANSIENT_EXHAUSTED: AgentOutcome.TRANSIENT_FAILURE,
    OutcomeKind.CIRCUIT_OPEN: AgentOutcome.TRANSIENT_FAILURE,
}


SERVICE_MISMATCH = "ServiceMismatch"
"""Dead-letter reason of a request whose service, operation or reply queue is not its queue's."""

SERVICE_OF_QUEUE = {queue: service for service, queue in REQUEST_QUEUES.items()}

OPERATIONS_OF_SERVICE = {name: frozenset(spec.operations)
                         for name, spec in catalogue().services.items()}


def parse_request(body: bytes, queue: str) -> AgentRequest:
    """Parse an agent request body strictly (A1); ``queue`` names the service.

    Raises
    ------
    orders.models.wire.InvalidMessage
        For every form of bad body (prefixed "agent request"), and ``ServiceMismatch`` for
        a service, operation or ``replyTo`` that is not the queue's, or a ``payload.orderId``,
        ``idempotencyKey``, ``eventName`` or undo's forward key that is not the request's own;
        the caller dead-letters it.
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
    problems += _not_its_order(request)
    if request.reply_to.casefold() != AGENT_REPLIES_QUEUE:
        problems.append(f"replyTo: {request.reply_to[:64]!r} is not the agents' reply queue "
                        f"'{AGENT_REPLIES_QUEUE}'")
    if problems:
        raise wire.InvalidMessage(SERVICE_MISMATCH, "agent request: " + "; ".join(problems)
                                  + "; the queue decides the service and the reply queue")
    return request


FORWARD_KEY_FIELDS = {undo: info.alias or name for undo, model in PAYLOADS.items()
                      for name, info in model.model_fields.items()
                      if any(isinstance(meta, ForwardKeyField) for meta in info.metadata)}
"""Wire name of the payload field by which each undo names its forward request's key."""


def _not_its_order(request: AgentRequest) -> list[str]:
    """Name what routes the call or its reply away from the envelope's order and operation."""
    problems = []
    named = request.payload.get("orderId")
    if named != request.order_key:
        problems.append(f"payload.orderId: {repr(named)[:66]} is not the request's orderId "
                        f"{request.order_key!r}")
    key = idempotency_key(request.order_key, request.operation)
    if request.idempotency_key != key:
        problems.append(f"idempotencyKey: {request.idempotency_key[:64]!r} is not the key of "
                        f"{request.operation} for the order ({key!r}, the same on every "
                        "attempt: A2)")
    forward = catalogue().undoes(request.operation)
    field = FORWARD_KEY_FIELDS.get(request.operation)
    named_key = request.payload.get(field) if field is not None else None
    if forward is not None and named_key is not None and named_key != idempotency_key(
            request.order_key, forward):
        problems.append(f"payload.{field}: {repr(named_key)[:66]} is not the key of the "
                        f"order's {forward} ({idempotency_key(request.order_key, forward)!r})")
    event = reply_event_name(request.operation)
    if request.event_name != event:
        problems.append(f"eventName: {request.event_name[:64]!r} is not the reply event of "
                        f"{request.operation} ({event!r})")
    return problems


def service_url(services: Services, request: AgentRequest) -> str:
    """Return the URL of the request's operation on its service.

    Raises
    ------
    azurekit.services.UnknownServiceError
        If the service or the operation is not in ``infra/services.json``: never a default.
    """
    path = catalogue().operation(request.service, request.operation).path
    return services.settings.service_url(request.service).rstrip("/") + path


def _state_needed(operation: str) -> ProcessState:
    """Return the ProcessState an attempt calling ``operation`` runs under (undos: Compensating)."""
    undo = catalogue().undoes(operation) is not None
    return ProcessState.COMPENSATING if undo else ProcessState.PROCESSING


def not_held_reason(services: Services, request: AgentRequest) -> str | None:
    """Say why ``request``'s attempt does not hold its order; None if it does.

    One point read of the state record: LockedBy must be the request's instance and the
    ProcessState the one its operation runs under (docs/pipeline.md, "Agents (A1-A5)").
    """
    record = services.stores.states.get(request.order_key)
    if record is None:
        return (f"not called: order {request.order_key} has no state record, "
                f"not held by {request.instance_id}")
    held = (f"not called: order {request.order_key} is {record.process_state.value}, "
            f"held by {record.locked_by or 'nobody'}")
    if record.locked_by != request.instance_id:
        return f"{held}, not by {request.instance_id}"
    needed = _state_needed(request.operation)
    if record.process_state is not needed:
        return f"{held}; {request.operation} is called only while {needed.value}"
    return None


def _not_called(request: AgentRequest, reason: str) -> AgentReply:
    """Reply, as past its deadline, to a request whose attempt does not hold its order."""
    log.warning("agent %s: %s %s", request.service, request.operation, reason)
    record_agent_call(request.service, 0, AgentOutcome.TRANSIENT_FAILURE.value,
                      request.operation)
    return AgentReply(message_id=reply_message_id(request.message_id),
                      order_key=request.order_key, instance_id=request.instance_id,
                      operation=request.operation, event_name=request.event_name,
                      request_id=request.message_id,
                      idempotency_key=request.idempotency_key,
                      outcome=AgentOutcome.TRANSIENT_FAILURE,
                      tries=0, circuit_open=False, reason=reason)


def handle(request: AgentRequest, services: Services,
           sleep: Callable[[float], None] = time.sleep, *,
           delivery_count: int = 1) -> AgentReply:
    """Call the remote service for ``request`` and build the reply.

    ``sleep`` waits between retries (seconds). ``delivery_count`` is 1 for the first Service
    Bus delivery, the only one on which an open circuit sets ``circuit_open`` (A5, V2). The
    reply is Succeeded, PermanentFailure (4xx) or TransientFailure; TransientFailure without
    a call as well when the request's attempt no longer holds the order.
    """
    if services.clock.now() < request.complete_by:
        not_held = not_held_reason(services, request)
        if not_held is not None:
            return _not_called(request, not_held)
    method, _ = ENDPOINTS[request.operation]
    remote = RemoteRequest(service=request.service, method=method,
                           url=service_url(services, request),
                           idempotency_key=request.idempotency_key, json=request.payload,
                           order_key=request.order_key)
    outcome = call_remote(services.http, remote, deadline=request.complete_by,
                          max_attempts=request.max_attempts,
                          breaker=services.breakers.get(request.service),
                          clock=services.clock, sleep=sleep,
                          try_timeout=timedelta(
                              seconds=services.settings.AGENT_CALL_TIMEOUT_S))
    breaker_state = services.breakers.get(request.service).state
    record_agent_call(request.service, outcome.tries, _OUTCOMES[outcome.kind].value,
                      request.operation)
    record_circuit_state(request.service, breaker_state.value)
    body = outcome.body if isinstance(outcome.body, dict) else None
    result = body if outcome.succeeded else None
    # Only a code the catalogue declares safe: the reply is kept in the history (X10).
    error_code = None if outcome.succeeded else safe_error_code(request.service, body)
    refused = (outcome.kind is OutcomeKind.CIRCUIT_OPEN and outcome.tries == 0
               and delivery_count <= 1)
    return AgentReply(message_id=reply_message_id(request.message_id),
                      order_key=request.order_key, instance_id=request.instance_id,
                      operation=request.operation, event_name=request.event_name,
                      request_id=request.message_id,
                      idempotency_key=request.idempotency_key,
                      outcome=_OUTCOMES[outcome.kind],
                      tries=outcome.tries, circuit_open=refused,
                      retry_at=outcome.retry_at if refused else None,
                      status_code=outcome.status_code,
                      error_code=error_code,
                      result=result, reason=outcome.reason)


def reply(services: Services, request: AgentRequest, answer: AgentReply) -> None:
    """Send the reply to ``agent-replies`` with its stable MessageId (A4)."""
    services.sender.send(AGENT_REPLIES_QUEUE, OutgoingMessage(
        body=answer.model_dump(mode="json"), message_id=answer.message_id,
        correlation_id=request.message_id,
        application_properties={"orderId": answer.order_key,
                                "outcome": answer.outcome.value}))
