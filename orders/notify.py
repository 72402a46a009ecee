"""Status messages to the submitting client (S8) and alerts to operators (S7).

MessageIds are stable per order and status, so a step that runs twice (X7) sends once; a
final status is pending in the record until sent (docs/operations.md, "Final statuses").
"""

from __future__ import annotations

import logging

from orders.lifecycle.changes import status_sent
from orders.lifecycle.ids import status_message_id
from orders.lifecycle.transitions import Actor
from orders.messaging import MessageSender, MessagingError, OutgoingMessage
from orders.models import FINAL_STATES
from orders.models.messages import OperatorAlert, StatusMessage
from orders.names import OPERATOR_ALERTS_QUEUE
from orders.stores import StateStore
from orders.stores.errors import StoreError

log = logging.getLogger("orders.notify")


def send_status(sender: MessageSender, reply_to: str, message: StatusMessage,
                dedupe_suffix: str = "") -> None:
    """Send a status to the client's reply queue; ``dedupe_suffix`` tells real repeats apart."""
    sender.send(reply_to, OutgoingMessage(
        body=message.model_dump(mode="json"),
        message_id=status_message_id(message.order_id, message.status.value, dedupe_suffix),
        application_properties={"orderId": message.order_id,
                                "status": message.status.value}))


def send_alert(sender: MessageSender, alert: OperatorAlert, message_id: str) -> None:
    """Send an operator alert (stable ``message_id`` so a rerun alerts once)."""
    sender.send(OPERATOR_ALERTS_QUEUE, OutgoingMessage(
        body=alert.model_dump(mode="json"), message_id=message_id,
        application_properties={"kind": alert.kind, "orderId": alert.order_key or ""}))



def send_final_status(states: StateStore, sender: MessageSender, order_key: str,
                      reply_to: str, message: StatusMessage, *, instance_id: str,
                      actor: Actor) -> bool:
    """Send an order's final status and note it in the record, or leave it pending (S8).

    False if the send failed (logged): the supervisor resends it, under the same MessageId.
    """
    try:
        send_status(sender, reply_to, message, dedupe_suffix=f":{instance_id}")
    except MessagingError as exc:
        log.warning("order %s: final status %s not sent (%s); the supervisor resends it",
                    order_key, message.status.value, exc)
        return False
    record = states.get(order_key)
    if (record is None or record.process_state not in FINAL_STATES
            or record.locked_by != instance_id or record.complete_by is None):
        return True  # nothing pending: already noted, or an order this attempt did not end
    try:
        states.replace(status_sent(record, actor))
    except StoreError as exc:  # includes another writer first; a resend is a duplicate
        log.info("order %s: final status sent, not noted (%s); a resend is dropped as a "
                 "duplicate", order_key, exc)
    return True
