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
from orders.lifecycle.ids import reply_message_id
from orders.messaging import OutgoingMessage
from orders.models import wire
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest
from orders.observability.metrics import record_agent_call, record_circuit_state
from orders.runtime import Services

log = logging.getLogger("orders.agents")

ENDPOINTS = {
    "charge": ("POST", "/payments"),
    "refund": ("POST", "/payments/refunds"),
    "ship": ("POST", "/shipments"),
    "cancel_shipment": ("POST", "/shipments/cancellations"),
}
"""HTTP method and path of each operation on its service.

Fixed paths: identifiers (OrderID, the forward request's idempotency key) travel in the
JSON body, never in the URL, so no data can steer a request (an OrderID ``..`` in a path
would be normalised away by the HTTP client, turning a refund into another request)."""

_OUTCOMES = {
    OutcomeKind.SUCCEEDED: AgentOutcome.SUCCEEDED,
    OutcomeKind.PERMANENT_FAILURE: AgentOutcome.PERMANENT_FAILURE,
    OutcomeKind.TRANSIENT_EXHAUSTED: AgentOutcome.TRANSIENT_FAILURE,
    OutcomeKind.CIRCUIT_OPEN: AgentOutcome.TRANSIENT_FAILURE,
}


def parse_request(body: bytes) -> AgentRequest:
    """Parse an agent request body strictly (SPEC A1); never raise anything else for it.

    Raises
    ------
    orders.models.wire.InvalidMessage
        For every form of bad body, as :func:`orders.models.wire.parse` raises it, with
        "agent request" before its description; the caller dead-letters the message on
        its first delivery.
    """
    return wire.parse(body, AgentRequest, what="agent request")


def service_url(services: Services, request: AgentRequest) -> str:
    """Return the URL of the request's operation on its service."""
    base = services.settings.PAYMENT_API_URL if request.service == "payment" \
        else services.settings.SHIPPING_API_URL
    _, path = ENDPOINTS[request.operation]
    return base.rstrip("/") + path


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
    """Send the reply to the request's reply queue with its stable MessageId."""
    services.sender.send(request.reply_to, OutgoingMessage(
        body=answer.model_dump(mode="json"), message_id=answer.message_id,
        correlation_id=request.message_id,
        application_properties={"orderId": answer.order_id,
                                "outcome": answer.outcome.value}))
