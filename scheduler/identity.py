"""Which client sent an order: the queue it arrived on, never its body (SPEC S8, X10).

Service Bus authorises a sender per queue and cannot tie a field of the body to the
sender's identity, so each client has its own submit queue ``orders-<clientId>`` that only
its identity may send to, and submission takes the client id from that queue. The body
still names its client (``clientId``, ``replyTo``) for the client's own bookkeeping; a body
that names another client is refused as ``ClientMismatch``: dead-lettered, nothing stored,
an operator alerted. Nobody can thereby have status messages sent to another client's
queue, or take or shadow another client's orders.

The shared ``orders`` queue of earlier versions accepts no orders any more (a client could
put anything in a body there): what still arrives on it is dead-lettered as
``UseClientQueue`` with an alert, so nothing is lost while clients move to their queues;
an operator resends each message to the queue of the client that really sent it.
"""

from __future__ import annotations

import logging
from datetime import datetime
from hashlib import sha256
from typing import Any

from orders.messaging import MessageSender
from orders.models import wire
from orders.models.messages import OperatorAlert, reply_queue, submit_queue
from orders.names import ORDERS_QUEUE
from orders.notify import send_alert

log = logging.getLogger("orders.submission")

CLIENT_MISMATCH = "ClientMismatch"
"""Dead-letter reason of a body that names a client other than its queue's."""

USE_CLIENT_QUEUE = "UseClientQueue"
"""Dead-letter reason of a message on the shared ``orders`` queue."""

_SHOWN = 64
"""Characters of a body's value quoted in a reason."""


def client_mismatch(data: Any, client_id: str) -> str | None:
    """Say how a decoded body names another client than ``client_id``, or None if it does not.

    Parameters
    ----------
    data : Any
        The decoded body (:func:`orders.models.wire.loads`).
    client_id : str
        The client whose submit queue the message arrived on.

    Returns
    -------
    str or None
        ``clientId: ...`` and/or ``replyTo: ...`` naming the value and what the queue
        requires; None when both fields name the queue's client, or are missing or not
        strings (the contract then refuses the body as ``SchemaViolation``).
    """
    if not isinstance(data, dict):
        return None
    problems = []
    named, reply_to = data.get("clientId"), data.get("replyTo")
    if isinstance(named, str) and named != client_id:
        problems.append(f"clientId: {named[:_SHOWN]!r} is not the client of queue "
                        f"'{submit_queue(client_id)}' ({client_id!r})")
    if isinstance(reply_to, str) and reply_to != reply_queue(client_id):
        problems.append(f"replyTo: {reply_to[:_SHOWN]!r} is not the reply queue of client "
                        f"{client_id!r} ('{reply_queue(client_id)}')")
    if not problems:
        return None
    return ("; ".join(problems) + "; a client submits only its own orders and hears only on "
            "its own reply queue (SPEC S8, X10); nothing was stored")


def alert_mismatch(sender: MessageSender, client_id: str, body: bytes, why: str,
                   now: datetime) -> None:
    """Alert operators to a ``ClientMismatch``: a client misconfigured, or trying (X10).

    The alert's MessageId is derived from the queue's client and the body, so a
    redelivered message alerts once.
    """
    digest = sha256(body).hexdigest()[:16]
    send_alert(sender, OperatorAlert(
        kind="ClientMismatch", at=now,
        reason=f"a message on '{submit_queue(client_id)}' was dead-lettered: {why}"),
        message_id=f"{CLIENT_MISMATCH}:{client_id}:{digest}")
    log.warning("client %s: message naming another client dead-lettered: %s", client_id, why)


def refuse_shared_queue(body: bytes, message_id: str | None, sender: MessageSender,
                        now: datetime) -> str:
    """Alert operators to a message on the shared ``orders`` queue; return the reason text.

    Parameters
    ----------
    body : bytes
        The message body; its ``clientId``, if readable, is quoted as a hint for the
        operator only (it proves nothing about the sender).
    message_id : str or None
        The message's MessageId, quoted so the operator finds it in the dead-letter queue.
    sender : MessageSender
        For the ``UseClientQueue`` alert (one per message: its id comes from the MessageId
        and the body).
    now : datetime
        Alert time.

    Returns
    -------
    str
        The dead-letter description: where orders go now and that nothing was stored.
    """
    try:
        data = wire.loads(body)
    except wire.InvalidMessage:
        data = None
    named = data.get("clientId") if isinstance(data, dict) else None
    hint = (f"; the body says clientId {named[:_SHOWN]!r}, which an operator may verify "
            f"before resending it to '{submit_queue(named[:_SHOWN])}'"
            if isinstance(named, str) else "")
    why = (f"the shared queue '{ORDERS_QUEUE}' accepts no orders: each client submits to its "
           f"own queue '{submit_queue('<clientId>')}', which names the client (SPEC X10); "
           f"nothing was stored{hint}")
    digest = sha256((message_id or "").encode() + b"\0" + body).hexdigest()[:16]
    send_alert(sender, OperatorAlert(
        kind="UseClientQueue", at=now,
        reason=f"message {str(message_id)[:_SHOWN]!r} dead-lettered: {why}"),
        message_id=f"{USE_CLIENT_QUEUE}:{digest}")
    return why
