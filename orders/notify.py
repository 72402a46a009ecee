"""Status messages to the submitting client (S8) and alerts to operators (S7).

MessageIds are stable per order and status, so a step that runs twice (X7) sends once; a
final status is pending in the record until sent (docs/operations.md, "Final statuses").
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from orders.lifecycle.changes import status_sent
from orders.lifecycle.ids import split_order_key, status_message_id
from orders.lifecycle.transitions import Actor
from orders.messaging import MessageSender, MessagingError, OutgoingMessage
from orders.models import FINAL_STATES, StateRecord
from orders.models.messages import OperatorAlert, StatusMessage
from orders.names import OPERATOR_ALERTS_QUEUE
from orders.stores import StateStore
from orders.stores.errors import PreconditionFailedError, StoreError

log = logging.getLogger("orders.notify")


UNREAD_ORDER_ID = "-"
"""Stands for the OrderID in the MessageId of a status about a body without a readable one."""


def send_status(sender: MessageSender, reply_to: str, message: StatusMessage,
                dedupe_suffix: str = "") -> None:
    """Send a status to the client's reply queue; ``dedupe_suffix`` tells real repeats apart."""
    sender.send(reply_to, OutgoingMessage(
        body=message.model_dump(mode="json"),
        message_id=status_message_id(message.order_id or UNREAD_ORDER_ID, message.status.value,
                                     dedupe_suffix),
        application_properties={"orderId": message.order_id or "",
                                "status": message.status.value}))


ALERT_WINDOW = timedelta(minutes=10)
"""Alerts share a MessageId per client, kind and window (``operator-alerts`` dedupes 10 min)."""

UNCOLLAPSED_KINDS = frozenset({"CompensationFailed"})
"""Kinds alerted once per order even when a client is known: each is money the service may
owe and the ledger audit needs the alert naming it (docs/operations.md, "Operator alerts")."""


def collapsed_alert_id(kind: str, source: str, now: datetime) -> str:
    """Return ``<kind>:<source>:<window start>``, shared within one :data:`ALERT_WINDOW`."""
    at = now.astimezone(UTC)
    step = int(ALERT_WINDOW.total_seconds())
    start = datetime.fromtimestamp(int(at.timestamp()) // step * step, UTC)
    return f"{kind}:{source}:{start:%Y%m%dT%H%MZ}"


def alert_client(alert: OperatorAlert) -> str | None:
    """Return the client an alert is about: its ``clientId``, else its order key's, or None."""
    if alert.client_id is not None:
        return alert.client_id
    if alert.order_key is None:
        return None
    try:
        return split_order_key(alert.order_key)[0]
    except ValueError:
        return None


def send_alert(sender: MessageSender, alert: OperatorAlert, message_id: str) -> None:
    """Send an operator alert, collapsed per client, kind and window whatever its cause (S7).

    An alert about a client (its ``clientId`` or its order key's client) gets the MessageId
    :func:`collapsed_alert_id`, so the queue's duplicate detection keeps one per client, kind
    and :data:`ALERT_WINDOW`: 500 out-of-stock orders of one client raise one ``OrderError``,
    not 500 (X10). Other alerts, and :data:`UNCOLLAPSED_KINDS`, use ``message_id`` (stable,
    so a rerun alerts once).
    """
    client = alert_client(alert)
    if client is not None and alert.kind not in UNCOLLAPSED_KINDS:
        collapsed = collapsed_alert_id(alert.kind, client, alert.at)
        if message_id != collapsed:
            minutes = int(ALERT_WINDOW.total_seconds() // 60)
            alert = alert.model_copy(update={"client_id": client, "reason": (
                f"{alert.reason}; further {alert.kind} alerts about client {client} within "
                f"{minutes} minutes raise no new alert: the dashboard's attention lists show "
                f"every order")})
        message_id = collapsed
    sender.send(OPERATOR_ALERTS_QUEUE, OutgoingMessage(
        body=alert.model_dump(mode="json"), message_id=message_id,
        application_properties={"kind": alert.kind, "orderId": alert.order_key or "",
                                "clientId": client or ""}))


def send_final_status(states: StateStore, sender: MessageSender, order_key: str,
                      reply_to: str, message: StatusMessage, *, instance_id: str,
                      actor: Actor, written: StateRecord | None = None) -> bool:
    """Send an order's final status and note it in the record, or leave it pending (S8).

    False if the send failed (logged): the supervisor resends it, under the same MessageId.
    ``written``: the record as the caller has just written it (its ETag), noted without
    reading it again; should another writer have changed it since (412), it is read again
    and noted as without ``written``.
    """
    try:
        send_status(sender, reply_to, message, dedupe_suffix=f":{instance_id}")
    except MessagingError as exc:
        log.warning("order %s: final status %s not sent (%s); the supervisor resends it",
                    order_key, message.status.value, exc)
        return False
    if written is not None:
        try:
            _note_sent(states, written, instance_id, actor)
            return True
        except PreconditionFailedError:
            pass  # changed since the caller wrote it: read as it is now
        except StoreError as exc:
            _not_noted(order_key, exc)
            return True
    record = states.get(order_key)
    try:
        _note_sent(states, record, instance_id, actor)
    except StoreError as exc:  # includes another writer first; a resend is a duplicate
        _not_noted(order_key, exc)
    return True


def _note_sent(states: StateStore, record: StateRecord | None, instance_id: str,
               actor: Actor) -> None:
    """Note the final status as sent in ``record`` if pending there; StoreError as replace."""
    if (record is None or record.process_state not in FINAL_STATES
            or record.locked_by != instance_id or record.complete_by is None):
        return  # nothing pending: already noted, or an order this attempt did not end
    states.replace(status_sent(record, actor))


def _not_noted(order_key: str, exc: StoreError) -> None:
    log.info("order %s: final status sent, not noted (%s); a resend is dropped as a "
             "duplicate", order_key, exc)
