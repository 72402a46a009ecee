"""Errors of the messaging port, the same whichever adapter sends.

Adapters map by exception type or SQLite error code, never by message text.
"""

from __future__ import annotations

from orders.errors import OrderServiceError


class MessagingError(OrderServiceError):
    """Root of the port's errors; raised as is for any other failure (permanent)."""


class QueueNotFoundError(MessagingError):
    """The queue does not exist (Service Bus ``MessagingEntityNotFoundError``); permanent."""

    def __init__(self, queue: str, detail: str) -> None:
        super().__init__(f"queue {queue!r} not found: {detail}")
        self.queue = queue


class MessageRejectedError(MessagingError):
    """The broker refused the message itself (for example over 256 KB); permanent."""


class MessagingUnavailableError(MessagingError):
    """The broker could not be reached or is busy, after the client's own retries; retryable."""

    retryable = True
