"""Registers the agents: one Service Bus trigger per service of ``infra/services.json`` (A1).

Which requests are dead-lettered and which redelivered: docs/pipeline.md, "Agents (A1-A5)".
"""

import logging

import azure.functions as func
from opentelemetry.trace import SpanKind

from agents import handler
from orders import names
from orders.compensation.plan import outcome_label
from orders.messaging import QueueNotFoundError
from orders.models import wire
from orders.observability.logs import log_context
from orders.observability.tracing import order_span, traceparent_of
from orders.runtime import services
from orders.settle import dead_letter

log = logging.getLogger("orders.agents")
bp = func.Blueprint()  # type: ignore[no-untyped-call]  # azure.functions: untyped __init__


def _serve(queue: str, msg: func.ServiceBusMessage) -> None:
    svc = services()
    try:
        request = handler.parse_request(msg.get_body(), queue)
    except wire.InvalidMessage as exc:
        dead_letter(queue, msg, exc.reason, exc.description)
        return
    # A child of the activity that sent the request; each HTTP try is a child of it (X8).
    with log_context(request.order_key, request.instance_id), \
            order_span(f"agent {request.service} {request.operation}",
                       order_key=request.order_key, instance_id=request.instance_id,
                       operation=request.operation, kind=SpanKind.CONSUMER,
                       parent=traceparent_of(msg.application_properties)) as span:
        answer = handler.handle(request, svc, sleep=svc.sleep,
                                delivery_count=msg.delivery_count or 1)
        span.set_attributes({"orders.outcome": outcome_label(answer),
                             "orders.calls": answer.tries})
        try:
            handler.reply(svc, request, answer)
        except QueueNotFoundError as exc:
            dead_letter(queue, msg, "UnknownReplyQueue",
                        f"agent request: the reply queue '{names.AGENT_REPLIES_QUEUE}' does "
                        "not exist "
                        f"({exc}); the {request.operation} call was made with idempotency "
                        f"key '{request.idempotency_key}', so a corrected resend is safe")
            return
        log.info("agent %s: order %s %s -> %s after %d call(s)", request.service,
                 request.order_key, request.operation, outcome_label(answer), answer.tries)


def _register(service: str, queue: str) -> None:
    """Register ``<service>_agent``, the trigger on the service's request queue (A1)."""

    def agent(msg: func.ServiceBusMessage) -> None:
        _serve(queue, msg)

    agent.__name__ = agent.__qualname__ = f"{service}_agent"
    agent.__doc__ = f"{service.capitalize()} agent: calls the {service} service."
    globals()[agent.__name__] = bp.service_bus_queue_trigger(
        arg_name="msg", queue_name=queue, connection=names.SERVICEBUS_CONNECTION)(agent)


for _service, _queue in names.REQUEST_QUEUES.items():
    _register(_service, _queue)
