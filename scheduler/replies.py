"""Reply handler (SPEC A4): route an agent's reply to the orchestration waiting for it.

The reply names its instance id and event name; the handler raises that external event.
A late reply (its attempt already finished, HTTP 410) or one for an unknown instance (404)
changes nothing and is completed. Exact duplicates never reach here: the reply queue's
duplicate detection drops a resend with the same MessageId.

Before raising it, a reply that an open circuit refused before any call
(``AgentReply.circuit_open``) is marked on the state record, fenced on LockedBy (S4):
``circuitRefusedBy`` = the instance id; only if that request was the attempt's first
remote call, so the attempt called nothing at all (:func:`orders.budget.refusal_made_no_call`,
SPEC X2). The supervisor, finding that attempt expired,
then holds it back instead of counting it against MAX_FAILURES (A5, V2), so orders that
never reached the service are not failed by another order's fault.
"""

from __future__ import annotations

import logging
from typing import Any

from orders.budget import refusal_made_no_call
from orders.lifecycle.changes import mark_circuit_refusal as marked
from orders.lifecycle.fencing import FencedError, fenced_update
from orders.models import StateRecord, wire
from orders.models.messages import AgentReply
from orders.stores import StateStore
from orders.stores.errors import StoreError
from scheduler.durable_client import InstanceGoneError, InstanceNotFoundError, raise_event

log = logging.getLogger("orders.replies")


class CalledBefore(Exception):
    """The refused attempt called a service at an earlier step: not marked (SPEC X2)."""


def parse_reply(body: bytes) -> AgentReply:
    """Parse an agent reply body strictly (SPEC A4); never raise anything else for it.

    Raises
    ------
    orders.models.wire.InvalidMessage
        A ``ValueError`` with ``reason`` ``InvalidJson`` or ``SchemaViolation`` and a
        description naming the field and rule, for every form of bad body (see
        :mod:`orders.models.wire`), after "agent reply"; the caller dead-letters it on its
        first delivery.
    """
    return wire.parse(body, AgentReply, what="agent reply")


async def route_reply(client: Any, reply: AgentReply) -> bool:
    """Raise the reply as an external event on its instance.

    A late reply is told by the HTTP status of the raise-event request (404, 410), as
    :func:`scheduler.durable_client.raise_event` maps it, never by the error's text.

    Parameters
    ----------
    client : azure.durable_functions.DurableOrchestrationClient
        The client from the function's durable client binding.
    reply : AgentReply
        The parsed reply.

    Returns
    -------
    bool
        True if delivered; False for a late reply (instance ended or unknown).

    Raises
    ------
    scheduler.durable_client.DurableClientError
        Any other refusal or failure of the request: retryable for 408, 429, 5xx or no
        answer, permanent otherwise. The trigger fails and Service Bus redelivers the
        reply, up to the queue's maxDeliveryCount.
    """
    try:
        await raise_event(client, reply.instance_id, reply.event_name,
                          reply.model_dump(mode="json"))
    except (InstanceGoneError, InstanceNotFoundError) as exc:
        log.info("late reply for %s (%s) ignored: %s", reply.instance_id,
                 reply.event_name, exc)
        return False
    return True


def mark_circuit_refusal(states: StateStore, reply: AgentReply) -> bool:
    """Mark the reply's attempt as refused by an open circuit, if it was (SPEC A5, V2, S4).

    Sets ``circuitRefusedBy`` to the reply's instance id with a conditional update that
    checks LockedBy still names that instance and the record is still supervised
    (Processing or Compensating). A stale attempt changes nothing, and neither does an
    order attempt refused at a later remote step: it called a service before, which a new
    attempt would call again, so only a counted failure keeps the retry budget
    (:func:`orders.budget.refusal_made_no_call`, SPEC X2). The mark is best
    effort: if the store refuses or fails, the attempt simply counts as a failure, as any
    transient failure does, and the reply is still routed.

    Parameters
    ----------
    states : StateStore
        The state store.
    reply : AgentReply
        The agent's reply; only one with ``circuit_open`` is marked.

    Returns
    -------
    bool
        True if the mark was written.
    """
    if not reply.circuit_open:
        return False
    iid = reply.instance_id

    def mark(record: StateRecord) -> StateRecord:
        if not refusal_made_no_call(record, reply.operation):
            raise CalledBefore(f"{iid} made remote calls before {reply.operation}")
        return marked(record, iid)

    try:
        fenced_update(states, reply.order_id, iid, mark)
    except CalledBefore as exc:
        log.info("open-circuit reply of %s not marked: %s; the attempt counts as a "
                 "failure (SPEC X2)", iid, exc)
        return False
    except FencedError as exc:
        log.info("open-circuit reply of %s not marked: %s", iid, exc)
        return False
    except StoreError as exc:
        log.warning("open-circuit reply of %s not marked (the attempt will count as a "
                    "failure): %s", iid, exc)
        return False
    log.info("%s %s: refused by the open circuit before any call; marked for the "
             "supervisor", iid, reply.operation)
    return True
