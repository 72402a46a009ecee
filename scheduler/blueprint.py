"""Registers the scheduler's functions: submission, starter and reply handler (S1, S3, A4)."""

import asyncio
import logging

import azure.durable_functions as df
import azure.functions as func

from orders import names
from orders.durable_blueprint import DurableBlueprint
from orders.models import wire
from orders.observability.logs import log_context
from orders.observability.metrics import record_submission
from orders.runtime import services
from orders.settle import dead_letter
from scheduler import replies, starter, submission
from scheduler.compensation_starter import start_compensations

log = logging.getLogger("orders.scheduler")
bp = DurableBlueprint()


@bp.service_bus_queue_trigger(arg_name="msg", queue_name=names.ORDERS_QUEUE,
                              connection=names.SERVICEBUS_CONNECTION)
def submit_order(msg: func.ServiceBusMessage) -> None:
    """Store a submitted order and its state record; dead-letter what cannot be (S1).

    A body that is not strict JSON or breaks the contract, and other data under a stored
    OrderID, are dead-lettered with the reason on the first delivery; only infrastructure
    failures (a store or queue unavailable) raise and are retried. Past ``MAX_IN_FLIGHT`` a
    new order is rejected to its client and the message completed (admission control, X3).
    """
    svc = services()
    result = submission.submit(msg.get_body(), svc.stores, svc.sender, svc.clock.now(),
                               max_in_flight=svc.settings.MAX_IN_FLIGHT,
                               message_id=msg.message_id)
    if isinstance(result, submission.Rejected):
        record_submission(False, result.reason)
        dead_letter(names.ORDERS_QUEUE, msg, result.reason, result.description)
    elif isinstance(result, submission.AdmissionRefused):
        record_submission(False, "AdmissionControl")
    else:
        record_submission(True)


@bp.timer_trigger(arg_name="timer", schedule="%STARTER_SCHEDULE%")
@bp.durable_client_input(client_name="client")
async def start_orders(timer: func.TimerRequest, client: df.DurableOrchestrationClient) -> None:
    """Claim Pending records and start their attempts (S3), then handed-over compensations (S9).

    Async because the durable client is; every store call runs off the event loop.
    """
    svc = await asyncio.to_thread(services)
    await starter.run_starter(client, svc)
    await start_compensations(client, svc)


@bp.service_bus_queue_trigger(arg_name="msg", queue_name=names.AGENT_REPLIES_QUEUE,
                              connection=names.SERVICEBUS_CONNECTION)
@bp.durable_client_input(client_name="client")
async def route_agent_reply(msg: func.ServiceBusMessage,
                            client: df.DurableOrchestrationClient) -> None:
    """Raise an agent's reply as an external event on its instance (A4).

    A reply that cannot be parsed is dead-lettered on its first delivery with the reason
    (``InvalidJson`` or ``SchemaViolation``); failures raising the event are retried. A
    reply refused by an open circuit is first marked on the state record (A5, V2).
    """
    try:
        reply = replies.parse_reply(msg.get_body())
    except wire.InvalidMessage as exc:
        await asyncio.to_thread(dead_letter, names.AGENT_REPLIES_QUEUE, msg, exc.reason,
                                exc.description)
        return
    with log_context(reply.order_id, reply.instance_id):
        svc = await asyncio.to_thread(services)
        # The store client is synchronous: off the worker's event loop (Azure parity).
        await asyncio.to_thread(replies.mark_circuit_refusal, svc.stores.states, reply)
        await replies.route_reply(client, reply)
