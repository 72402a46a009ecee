"""Reply handler (SPEC A4): route an agent's reply to the orchestration waiting for it.

The reply names its instance id and event name; the handler raises that external event.
A late reply (its attempt already finished, HTTP 410) or one for an unknown instance (404)
changes nothing and is completed. Exact duplicates never reach here: the reply queue's
duplicate detection drops a resend with the same MessageId.
"""

from __future__ import annotations

import logging
from typing import Any

from orders.models import wire
from orders.models.messages import AgentReply

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
