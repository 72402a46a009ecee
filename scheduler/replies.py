"""Reply handler (A4): route an agent's reply to the orchestration waiting for it.

A late reply (HTTP 410) or one for an unknown instance (404) is completed unchanged.
A reply an open circuit refused before the attempt's first remote call is first marked
on the record (:func:`mark_circuit_refusal`), so the supervisor holds the attempt back
instead of counting a failure (A5, V2, X2).
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
    """The refused attempt called a service at an earlier step: not marked (X2)."""


def parse_reply(body: bytes) -> AgentReply:
    """Parse an agent reply body strictly (A4).

    Raises
    ------
    orders.models.wire.InvalidMessage
        For every form of bad body, naming the field and rule; dead-letter it at once.
    """
    return wire.parse(body, AgentReply, what="agent reply")


async def route_reply(client: Any, reply: AgentReply) -> bool:
    """Raise the reply as an external event; False for a late reply (404, 410, by status).

    Raises
    ------
    scheduler.durable_client.DurableClientError
        Any other failure; the trigger fails and Service Bus redelivers the reply.
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
    """Mark the reply's attempt as refused by an open circuit; True if written (A5, V2, S4).

    Fenced on LockedBy; only when the refused call was the attempt's first
    (:func:`orders.budget.refusal_made_no_call`, X2). Best effort: a store failure leaves
    the attempt counted as a failure.
    """
    if not reply.circuit_open:
        return False
    iid = reply.instance_id

    def mark(record: StateRecord) -> StateRecord:
        if not refusal_made_no_call(record, reply.operation):
            raise CalledBefore(f"{iid} made remote calls before {reply.operation}")
        return marked(record, iid)

    try:
        fenced_update(states, reply.order_key, iid, mark)
    except CalledBefore as exc:
        log.info("open-circuit reply of %s not marked: %s; the attempt counts as a "
                 "failure (X2)", iid, exc)
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
