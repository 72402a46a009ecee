"""Which client sent an order: the queue it arrived on, never its body (S8, X10).

Service Bus authorises senders per queue and cannot tie a body field to the sender, so
each client has its own queue ``orders-<clientId>`` and submission takes the client and
its reply queue from it (docs/pipeline.md, step 1). The shared ``orders`` queue proves
nothing about a sender and dead-letters everything as ``UseClientQueue``. Client-caused
alerts are collapsed per client, reason and :data:`ALERT_WINDOW`.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Final

from orders.messaging import MessageSender
from orders.models import wire
from orders.models.messages import (
    AlertKind,
    OperatorAlert,
    SubmitOrder,
    reply_queue,
    submit_queue,
)
from orders.names import ORDERS_QUEUE
from orders.notify import ALERT_WINDOW, collapsed_alert_id, send_alert

log = logging.getLogger("orders.submission")

CLIENT_MISMATCH: Final = "ClientMismatch"
"""Dead-letter reason of a body that names a client other than its queue's."""

USE_CLIENT_QUEUE: Final = "UseClientQueue"
"""Dead-letter reason of a message on the shared ``orders`` queue."""

_SHOWN = 64

def same_queue(a: str, b: str) -> bool:
    """Say whether two queue names name one Service Bus entity (names ignore case)."""
    return a.casefold() == b.casefold()


def client_mismatch(parsed: SubmitOrder, client_id: str) -> str | None:
    """Say how a validated body names another client than ``client_id`` (S8, X10), or None."""
    problems = []
    if parsed.client_id != client_id:
        problems.append(f"clientId: {parsed.client_id[:_SHOWN]!r} is not the client of queue "
                        f"'{submit_queue(client_id)}' ({client_id!r})")
    if not same_queue(parsed.reply_to, reply_queue(client_id)):
        problems.append(f"replyTo: {parsed.reply_to[:_SHOWN]!r} is not the reply queue of "
                        f"client {client_id!r} ('{reply_queue(client_id)}')")
    if not problems:
        return None
    return ("; ".join(problems) + "; a client submits only its own orders and hears only on "
            "its own reply queue (S8, X10); nothing was stored")


def alert_client_caused(sender: MessageSender, kind: AlertKind, source: str, queue: str,
                        why: str, now: datetime, *, order_key: str | None = None) -> None:
    """Alert operators once per source, kind and window; ``queue`` holds the dead letters."""
    send_alert(sender, OperatorAlert(
        kind=kind, at=now, order_key=order_key, client_id=source if source != queue else None,
        reason=(f"a message on '{queue}' was dead-lettered: {why}; further {kind} messages "
                f"from this source within {int(ALERT_WINDOW.total_seconds() // 60)} minutes "
                f"raise no new alert: count them in the dead-letter queue of '{queue}'")),
        message_id=collapsed_alert_id(kind, source, now))


def alert_mismatch(sender: MessageSender, client_id: str, why: str, now: datetime) -> None:
    """Alert operators to a ``ClientMismatch``: a client misconfigured, or trying (X10)."""
    alert_client_caused(sender, CLIENT_MISMATCH, client_id, submit_queue(client_id), why, now)
    log.warning("client %s: message naming another client dead-lettered: %s", client_id, why)


def refuse_shared_queue(body: bytes, message_id: str | None, sender: MessageSender,
                        now: datetime) -> str:
    """Alert operators to a message on the shared ``orders`` queue; return the reason."""
    try:
        wire.loads(body)
        readable = ""
    except wire.InvalidMessage as exc:
        readable = f"; the body is not readable either ({exc.reason})"
    why = (f"message {str(message_id)[:_SHOWN]!r}: the shared queue '{ORDERS_QUEUE}' accepts "
           f"no orders: each client submits to its own queue "
           f"'{submit_queue('<clientId>')}', which names the client (X10); nothing was "
           f"stored; the client that sent it must resend it to its own queue, since nothing "
           f"here proves who sent it{readable}")
    alert_client_caused(sender, USE_CLIENT_QUEUE, ORDERS_QUEUE, ORDERS_QUEUE, why, now)
    return why
