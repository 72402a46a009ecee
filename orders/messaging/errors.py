"""Errors of the messaging port, the same whichever adapter sends.

Workflow code catches these instead of Azure SDK or local-host exceptions, and reads
:attr:`~orders.errors.OrderServiceError.retryable` to decide whether a retry can help
(STYLE 8). The adapters map by exception type (azure-servicebus) or SQLite error code
(local queues), never by message text (STYLE 15).
"""

from __future__ import annotations

from orders.errors import OrderServiceError


class MessagingError(OrderServiceError):
    """Root of the port's errors; raised as is for a failure no subclass names (permanent).

    An example is a missing "Azure Service Bus Data Sender" role assignment.
    """


class QueueNotFoundError(MessagingError):
    """The queue does not exist (Service Bus ``MessagingEntityNotFoundError``); permanent.

    Parameters
    ----------
    queue : str
        The queue name that was not found.
    detail : str
        The adapter's explanation.
    """

    def __init__(self, queue: str, detail: str) -> None:
        super().__init__(f"queue {queue!r} not found: {detail}")
        self.queue = queue


class MessageRejectedError(MessagingError):
    """The broker refused the message itself (for example over 256 KB); permanent."""


class MessagingUnavailableError(MessagingError):
    """The broker could not be reached or is busy, after the client's own retries; retryable."""

    retryable = True
