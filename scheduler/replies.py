"""Reply handler (SPEC A4): route an agent's reply to the orchestration waiting for it.

The reply names its instance id and event name; the handler raises that external event.
A late reply (its attempt already finished, HTTP 410) or one for an unknown instance (404)
changes nothing and is completed. Exact duplicates never reach here: the reply queue's
duplicate detection drops a resend with the same MessageId.

Before raising it, a reply that an open circuit refused before any call
(``AgentReply.circuit_open``) is marked on the state record, fenced on LockedBy (S4):
``circuitRefusedBy`` = the instance id. The supervisor, finding that attempt expired,
then holds it back instead of counting it against MAX_FAILURES (A5, V2), so orders that
never reached the service are not failed by another order's fault.
"""

from __future__ import annotations

import logging
from typing import Any

from orders.lifecycle.changes import mark_circuit_refusal as marked
from orders.lifecycle.fencing import FencedError, fenced_update
from orders.models import wire
from orders.models.messages import AgentReply
from orders.stores import StateStore
from orders.stores.errors import StoreError

log = logging.getLogger("orders.replies")


def parse_reply(body: bytes) -> AgentReply:
    """Parse an agent reply strictly (SPEC A4); never raise anything else for its body.

    Parameters
    ----------
    body : bytes
        The reply message body.

    Returns
    -------
    AgentReply
        The validated reply.

    Raises
    ------
    orders.models.wire.InvalidMessage
        A ``ValueError`` with ``reason`` ``InvalidJson`` or ``SchemaViolation`` and a
        description naming the field and rule, for every form of bad body (see
        :mod:`orders.models.wire`); the caller dead-letters it on its first delivery.
    """
    try:
        return wire.parse(body, AgentReply)
    except wire.InvalidMessage as exc:
        raise wire.InvalidMessage(exc.reason, f"agent reply: {exc.description}") from None


async def route_reply(client: Any, reply: AgentReply) -> bool:
    """Raise the reply as an external event on its instance.

    Returns
    -------
    bool
        True if delivered; False for a late reply (instance ended or unknown).
    """
    try:
        await client.raise_event(reply.instance_id, reply.event_name,
                                 reply.model_dump(mode="json"))
        return True
    except Exception as exc:  # noqa: BLE001 - the SDK raises plain Exception for 404/410
        text = str(exc)
        if "is gone" in text or "No instance with ID" in text:
            log.info("late reply for %s (%s) ignored: %s", reply.instance_id,
                     reply.event_name, text)
            return False
        raise


def mark_circuit_refusal(states: StateStore, reply: AgentReply) -> bool:
    """Mark the reply's attempt as refused by an open circuit, if it was (SPEC A5, V2, S4).

    Sets ``circuitRefusedBy`` to the reply's instance id with a conditional update that
    checks LockedBy still names that instance and the record is still supervised
    (Processing or Compensating). A stale attempt changes nothing. The mark is best
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

    try:
        fenced_update(states, reply.order_id, iid, lambda record: marked(record, iid))
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
