"""Messaging port of the app: send messages to Service Bus queues without knowing Azure.

Workflow code imports :class:`MessageSender`, :class:`OutgoingMessage` and the errors from
here; :func:`create_sender` picks the adapter (``local`` or ``servicebus``). Adapters are
not imported by this package: :mod:`orders.messaging.azure` needs azure-servicebus and
:mod:`orders.messaging.local` needs the local host.
"""

from orders.messaging.errors import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    QueueNotFoundError,
)
from orders.messaging.factory import BACKEND_LOCAL, BACKEND_SERVICEBUS, create_sender
from orders.messaging.port import MessageSender, OutgoingMessage

__all__ = [
    "BACKEND_LOCAL",
    "BACKEND_SERVICEBUS",
    "MessageRejectedError",
    "MessageSender",
    "MessagingError",
    "MessagingUnavailableError",
    "OutgoingMessage",
    "QueueNotFoundError",
    "create_sender",
]
