"""Messaging port of the app (:mod:`orders.messaging.port`), the errors and the backend factory."""

from orders.messaging.errors import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    QueueNotFoundError,
)
from orders.messaging.factory import (
    BACKEND_LOCAL,
    BACKEND_SERVICEBUS,
    Messaging,
    create_messaging,
    create_sender,
)
from orders.messaging.port import MessageSender, OutgoingMessage

__all__ = [
    "BACKEND_LOCAL",
    "BACKEND_SERVICEBUS",
    "MessageRejectedError",
    "MessageSender",
    "Messaging",
    "MessagingError",
    "MessagingUnavailableError",
    "OutgoingMessage",
    "QueueNotFoundError",
    "create_messaging",
    "create_sender",
]
