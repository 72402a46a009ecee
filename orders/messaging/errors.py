"""Errors of the messaging port, the same whichever adapter sends.

Workflow code catches these instead of Azure SDK or local-host exceptions, and reads
``transient`` to decide whether a retry can help (STYLE 8).
"""

from __future__ import annotations


class MessagingError(Exception):
    """Root of the port's errors.

    Attributes
    ----------
    transient : bool
        True when the same send may succeed later unchanged.
    """

    transient: bool = False


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
    """The broker could not be reached or is busy, after the client's own retries."""

    transient = True
