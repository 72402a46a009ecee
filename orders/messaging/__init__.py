"""Messaging port of the app: send messages to Service Bus queues without knowing Azure.

Workflow code imports :class:`MessageSender`, :class:`OutgoingMessage` and the errors from
here; :func:`create_messaging` is the one place a backend (``local`` or ``servicebus``) is
chosen, and builds its adapters together. Adapters are not imported by this package:
:mod:`orders.messaging.azure` needs azure-servicebus and :mod:`orders.messaging.local` (the
local backend whole) the embedded engine.
"""

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
