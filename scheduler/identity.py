"""Which client sent an order: the queue it arrived on, never its body (SPEC S8, X10).

Service Bus authorises a sender per queue and cannot tie a field of the body to the
sender's identity, so each client has its own submit queue ``orders-<clientId>`` that only
its identity may send to, and submission takes the client id *and the reply queue* from
that queue: nothing in a body ever chooses a destination. The body still names its client
(``clientId``, ``replyTo``) for the client's own bookkeeping; once the body has passed its
contract (wire names only, unknown fields refused: :mod:`orders.models.wire`), a body whose
validated client or reply queue is another client's is refused as ``ClientMismatch``:
dead-lettered, nothing stored, an operator alerted. Queue names compare as Service Bus
compares entity names, without regard to case.

The shared ``orders`` queue of earlier versions accepts no orders any more: anyone who
held the send right could put any client's name in a body there, so a message on it proves
nothing about its sender. What still arrives is dead-lettered as ``UseClientQueue`` with an
alert; the client that sent it resends it to its own queue (an operator never resends on a
body's word).

Alerts a client can cause (these two) are collapsed per client, reason and
:data:`ALERT_WINDOW` (:func:`collapsed_alert_id`), so a client cannot bury other alerts
under a flood of its own; the dead-letter queue keeps every message, and its count.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
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
from orders.notify import send_alert

log = logging.getLogger("orders.submission")

CLIENT_MISMATCH: Final = "ClientMismatch"
"""Dead-letter reason of a body that names a client other than its queue's."""

USE_CLIENT_QUEUE: Final = "UseClientQueue"
"""Dead-letter reason of a message on the shared ``orders`` queue."""

_SHOWN = 64
"""Characters of a body's value quoted in a reason."""

ALERT_WINDOW = timedelta(minutes=10)
"""Client-caused alerts of one client and reason within this window share one MessageId,
so the alert queue's duplicate detection keeps the first only (its history window,
``infra/queues.json`` ``operator-alerts``, is at least this long: checked by a test)."""


def same_queue(a: str, b: str) -> bool:
    """Say whether two queue names name one Service Bus entity (names ignore case)."""
    return a.casefold() == b.casefold()


def client_mismatch(parsed: SubmitOrder, client_id: str) -> str | None:
    """Say how a validated body names another client than ``client_id``, or None.

    Parameters
    ----------
    parsed : SubmitOrder
        The body, validated by its contract with wire names only
        (:func:`orders.models.wire.validate`), so no other spelling of a field reached it.
    client_id : str
        The client whose submit queue the message arrived on.

    Returns
    -------
    str or None
        ``clientId: ...`` and/or ``replyTo: ...`` naming the value and what the queue
        requires; None when both name the queue's client (SPEC S8, X10).
    """
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
            "its own reply queue (SPEC S8, X10); nothing was stored")


def collapsed_alert_id(kind: str, source: str, now: datetime) -> str:
    """Return the MessageId shared by the alerts of one source and kind in one window.

    Parameters
    ----------
    kind : str
        The alert kind (``ClientMismatch``, ``UseClientQueue``...).
    source : str
        Who caused it: the client id, or the queue for a queue no client owns.
    now : datetime
        Aware alert time; the window is the :data:`ALERT_WINDOW` slice of the UTC day
        it falls in.

    Returns
    -------
    str
        ``<kind>:<source>:<window start>``, e.g.
        ``ClientMismatch:shop-a:20300101T1210Z``: one alert per window reaches the alert
        queue, whatever a client sends.
    """
    at = now.astimezone(UTC)
    step = int(ALERT_WINDOW.total_seconds())
    start = datetime.fromtimestamp(int(at.timestamp()) // step * step, UTC)
    return f"{kind}:{source}:{start:%Y%m%dT%H%MZ}"


def alert_client_caused(sender: MessageSender, kind: AlertKind, source: str, queue: str,
                        why: str, now: datetime, *, order_id: str | None = None) -> None:
    """Alert operators once per source, kind and window (see the module docstring).

    Parameters
    ----------
    sender : MessageSender
        For the alert.
    kind : str
        ``ClientMismatch``, ``UseClientQueue`` or ``ConflictingOrder``.
    source : str
        The client (from its queue), or the shared queue's name.
    queue : str
        The queue whose dead-letter queue holds this and the collapsed messages.
    why : str
        The first message's dead-letter description.
    now : datetime
        Alert time.
    order_id : str, optional
        The order key the first message was about, if any.
    """
    send_alert(sender, OperatorAlert(
        kind=kind, at=now, order_id=order_id, client_id=source if source != queue else None,
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
    """Alert operators to a message on the shared ``orders`` queue; return the reason text.

    Parameters
    ----------
    body : bytes
        The message body; nothing in it is trusted or quoted as a destination.
    message_id : str or None
        The message's MessageId, quoted so the sender can find its message.
    sender : MessageSender
        For the ``UseClientQueue`` alert (collapsed per window, :func:`collapsed_alert_id`).
    now : datetime
        Alert time.

    Returns
    -------
    str
        The dead-letter description: where orders go now and that nothing was stored.
    """
    try:
        wire.loads(body)
        readable = ""
    except wire.InvalidMessage as exc:
        readable = f"; the body is not readable either ({exc.reason})"
    why = (f"message {str(message_id)[:_SHOWN]!r}: the shared queue '{ORDERS_QUEUE}' accepts "
           f"no orders: each client submits to its own queue "
           f"'{submit_queue('<clientId>')}', which names the client (SPEC X10); nothing was "
           f"stored; the client that sent it must resend it to its own queue, since nothing "
           f"here proves who sent it{readable}")
    alert_client_caused(sender, USE_CLIENT_QUEUE, ORDERS_QUEUE, ORDERS_QUEUE, why, now)
    return why
