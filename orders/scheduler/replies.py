"""Reply handler (SPEC A4): route an agent's reply to the orchestration waiting for it.

The reply names its instance id and event name; the handler raises that external event.
A late reply (its attempt already finished, HTTP 410) or one for an unknown instance (404)
changes nothing and is completed. Exact duplicates never reach here: the reply queue's
duplicate detection drops a resend with the same MessageId.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import ValidationError

from orders.models.messages import AgentReply

log = logging.getLogger("orders.replies")


def parse_reply(body: bytes) -> AgentReply:
    """Parse an agent reply.

    Raises
    ------
    ValueError
        Naming the field and rule when the body is not a valid AgentReply.
    """
    try:
        return AgentReply.model_validate(json.loads(body))
    except (ValueError, ValidationError) as exc:
        raise ValueError(f"agent reply: {exc}") from exc


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
