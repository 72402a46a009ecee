"""Registers the scheduler's functions: submission, starter and reply handler (S1, S3, A4).

One submission trigger per client on ``orders-<clientId>`` (X10). ``function_app.py``
passes ``ORDER_CLIENTS`` to :func:`client_submissions` at its import, so every import of
the app sees the current setting; changing it restarts the app on Azure (docs/deploy.md).
"""

import logging
from collections.abc import Sequence

import azure.durable_functions as df
import azure.functions as func
from opentelemetry.trace import SpanKind

from orders import names, slots
from orders.compensation.plan import outcome_label
from orders.durable_blueprint import DurableBlueprint
from orders.models import StateRecord, wire
from orders.models.messages import submit_queue
from orders.observability.logs import log_context
from orders.observability.metrics import record_submission
from orders.observability.tracing import order_span, traceparent_of
from orders.runtime import services
from orders.settle import dead_letter
from orders.threads import off_loop
from scheduler import replies, starter, submission
from scheduler.compensation_starter import start_compensations
from scheduler.identity import USE_CLIENT_QUEUE, refuse_shared_queue

log = logging.getLogger("orders.scheduler")
bp = DurableBlueprint()
slots.on_slot_freed(starter.start_next)  # an ending attempt's slot starts the next order


def submission_function_name(client_id: str) -> str:
    """Return the function name of ``client_id``'s submission: ``submit_order_<id>``."""
    return f"submit_order_{client_id.replace('-', '_')}"


def client_submissions(clients: Sequence[str]) -> df.Blueprint:
    """Return a Blueprint with one trigger per client on ``orders-<clientId>`` (S1, X10)."""
    blueprint = DurableBlueprint()
    for client_id in clients:
        _register_submission(blueprint, client_id)
    return blueprint


def _register_submission(blueprint: DurableBlueprint, client_id: str) -> None:
    queue = submit_queue(client_id)

    @blueprint.function_name(name=submission_function_name(client_id))
    @blueprint.service_bus_queue_trigger(arg_name="msg", queue_name=queue,
                                         connection=names.SERVICEBUS_CONNECTION)
    @blueprint.durable_client_input(client_name="client")
    async def submit_order(msg: func.ServiceBusMessage,
                           client: df.DurableOrchestrationClient) -> None:
        # One trip off the event loop for the store calls of the submission and of the
        # starter's checks; each trip is two thread hand-offs (docs/performance.md).
        accepted = await off_loop(_submit_and_check, client_id, queue, msg)
        if accepted is None:
            return
        try:
            # Claimed now, not at the next STARTER_SCHEDULE occurrence (S3).
            await starter.start_claimable(client, services(), accepted)
        except Exception:  # noqa: BLE001 - stored and Pending: the timer's starter claims it
            log.exception("order %s stored; starting it now failed, the starter's next run "
                          "claims it", accepted.order_key)

    submit_order.__doc__ = (f"Submission of client {client_id!r}, queue {queue!r}, then the "
                            "starter's claim of the new order (S1, S3, X10).")


def _submit_and_check(client_id: str, queue: str,
                      msg: func.ServiceBusMessage) -> StateRecord | None:
    """Store a submitted order (:func:`_submit`); its record if it may start now.

    A failure of the starter's checks is logged and leaves the stored order Pending for the
    timer's starter.
    """
    accepted = _submit(client_id, queue, msg)
    if accepted is None or accepted.record is None:
        return None
    try:
        return accepted.record if starter.may_start_now(services(), accepted.record) else None
    except Exception:  # noqa: BLE001 - stored and Pending: the timer's starter claims it
        log.exception("order %s stored; checking whether it may start now failed, the "
                      "starter's next run claims it", accepted.order_key)
        return None


def _submit(client_id: str, queue: str,
            msg: func.ServiceBusMessage) -> submission.Accepted | None:
    """Store a submitted order, or dead-letter it; only infrastructure failures raise (S1, X3)."""
    svc = services()
    # A new trace; the client's, if sent, is linked (X8).
    with order_span("submission", operation="submit", kind=SpanKind.CONSUMER, new_trace=True,
                    links=[traceparent_of(msg.application_properties)]) as span:
        result = submission.submit(msg.get_body(), svc.stores, svc.sender, svc.clock.now(),
                                   client_id=client_id,
                                   quota=submission.Quota(svc.settings.MAX_IN_FLIGHT,
                                                          svc.settings.in_flight_quota),
                                   message_id=msg.message_id,
                                   max_amount=svc.settings.MAX_ORDER_AMOUNT,
                                   priced=svc.settings.PRICE_FROM_CATALOGUE)
        span.set_attribute("orders.outcome", type(result).__name__)
    if isinstance(result, submission.Rejected):
        record_submission(False, result.reason)
        dead_letter(queue, msg, result.reason, result.description)
    elif isinstance(result, submission.AdmissionRefused):
        record_submission(False, "AdmissionControl")
    else:
        record_submission(True)
        return result
    return None


@bp.service_bus_queue_trigger(arg_name="msg", queue_name=names.ORDERS_QUEUE,
                              connection=names.SERVICEBUS_CONNECTION)
def legacy_orders_queue(msg: func.ServiceBusMessage) -> None:
    """Dead-letter every message of the shared ``orders`` queue as ``UseClientQueue`` (X10)."""
    svc = services()
    why = refuse_shared_queue(msg.get_body(), msg.message_id, svc.sender, svc.clock.now())
    record_submission(False, USE_CLIENT_QUEUE)
    dead_letter(names.ORDERS_QUEUE, msg, USE_CLIENT_QUEUE, why)



@bp.timer_trigger(arg_name="timer", schedule="%STARTER_SCHEDULE%")
@bp.durable_client_input(client_name="client")
async def start_orders(timer: func.TimerRequest, client: df.DurableOrchestrationClient) -> None:
    """Claim Pending records and start their attempts (S3), then handed-over compensations (S9)."""
    svc = await off_loop(services)
    await starter.run_starter(client, svc)
    await start_compensations(client, svc)


@bp.service_bus_queue_trigger(arg_name="msg", queue_name=names.AGENT_REPLIES_QUEUE,
                              connection=names.SERVICEBUS_CONNECTION)
@bp.durable_client_input(client_name="client")
async def route_agent_reply(msg: func.ServiceBusMessage,
                            client: df.DurableOrchestrationClient) -> None:
    """Raise an agent's reply as an external event; dead-letter it if unparsable (A4, A5)."""
    try:
        reply = replies.parse_reply(msg.get_body())
    except wire.InvalidMessage as exc:
        await off_loop(dead_letter, names.AGENT_REPLIES_QUEUE, msg, exc.reason,
                                exc.description)
        return
    with log_context(reply.order_key, reply.instance_id), \
            order_span("reply routing", order_key=reply.order_key, instance_id=reply.instance_id,
                       operation=reply.operation, kind=SpanKind.CONSUMER,
                       parent=traceparent_of(msg.application_properties)) as span:
        if reply.circuit_open:  # only then is there a store write (A5)
            # The store client is synchronous: off the worker's event loop (Azure parity).
            await off_loop(
                lambda: replies.mark_circuit_refusal(services().stores.states, reply))
        delivered = await replies.route_reply(client, reply)
        span.set_attribute("orders.outcome", outcome_label(reply) if delivered else "late")
