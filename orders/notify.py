"""Status messages to the submitting client (SPEC S8) and alerts to operators (S7).

Each status message goes to the order's own reply queue only, with a MessageId that is
stable for the order and status, so a step that runs twice (SPEC X7) sends it once: the
queue's duplicate detection drops the resend.
"""

from __future__ import annotations

from orders.lifecycle.ids import status_message_id
from orders.messaging import MessageSender, OutgoingMessage
from orders.models.messages import OperatorAlert, StatusMessage
from orders.names import OPERATOR_ALERTS_QUEUE


def send_status(sender: MessageSender, reply_to: str, message: StatusMessage,
                dedupe_suffix: str = "") -> None:
    """Send a status message to one client's reply queue.

    Parameters
    ----------
    sender : MessageSender
        Messaging port.
    reply_to : str
        The client's reply queue from the state record.
    message : StatusMessage
        The status.
    dedupe_suffix : str
        Distinguishes repeats that are real (a resubmitted order completing again).
    """
    sender.send(reply_to, OutgoingMessage(
        body=message.model_dump(mode="json"),
        message_id=status_message_id(message.order_id, message.status.value, dedupe_suffix),
        application_properties={"orderId": message.order_id,
                                "status": message.status.value}))


def send_alert(sender: MessageSender, alert: OperatorAlert, message_id: str) -> None:
    """Send an operator alert (stable ``message_id`` so a rerun alerts once)."""
    sender.send(OPERATOR_ALERTS_QUEUE, OutgoingMessage(
        body=alert.model_dump(mode="json"), message_id=message_id,
        application_properties={"kind": alert.kind, "orderId": alert.order_id or ""}))

