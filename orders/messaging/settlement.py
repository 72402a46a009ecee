"""Settle a trigger's message explicitly: dead-letter it with a reason, never drop it (S1).

Locally by lock token; in Azure by forwarding a copy: docs/deploy.md, "Dead letters in Azure".
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any, Protocol

from orders.messaging.port import MessageSender, OutgoingMessage

DEAD_LETTERS_QUEUE = "dead-letters"
"""Where the Azure settler forwards dead-lettered messages (in infra/queues.json)."""

REASON_PROPERTY = "DeadLetterReason"
DESCRIPTION_PROPERTY = "DeadLetterErrorDescription"
SOURCE_PROPERTY = "DeadLetterSource"
"""Application properties of a forwarded message: Service Bus's own dead-letter names."""

MAX_DESCRIPTION = 4096
"""Longest DeadLetterErrorDescription Service Bus keeps (its limit for the header)."""


class MessageSettler(Protocol):
    """Dead-letters a message received by a Service Bus trigger."""

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """Move ``message`` to ``queue``'s dead-letter subqueue with a reason."""
        ...


class ForwardingSettler:
    """Dead-letters in Azure by forwarding a copy to :data:`DEAD_LETTERS_QUEUE`."""

    def __init__(self, sender: MessageSender) -> None:
        self._sender = sender

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """Forward ``message`` with its reason; the host's auto-complete then completes it.

        Raises
        ------
        MessagingError
            The copy was not sent: the invocation fails and Service Bus redelivers (S1).
        """
        self._sender.send(DEAD_LETTERS_QUEUE, dead_letter_copy(queue, message, reason,
                                                               description))


def dead_letter_copy(queue: str, message: Any, reason: str, description: str
                     ) -> OutgoingMessage:
    """Return the copy :class:`ForwardingSettler` sends (docs/deploy.md, "Dead letters in Azure").

    Its MessageId is fixed by source queue and MessageId: a second forward is dropped.
    """
    original_id = str(message.message_id or "")
    properties: dict[str, Any] = {
        str(k): v for k, v in (message.application_properties or {}).items()
        if isinstance(v, str | int | float | bool)}
    enqueued = message.enqueued_time_utc
    properties.update({
        REASON_PROPERTY: reason,
        DESCRIPTION_PROPERTY: description[:MAX_DESCRIPTION],
        SOURCE_PROPERTY: queue,
        "OriginalMessageId": original_id,
        "OriginalDeliveryCount": message.delivery_count or 0,
        "OriginalEnqueuedTimeUtc": enqueued.isoformat() if isinstance(enqueued, datetime)
        else None,
    })
    return OutgoingMessage(
        message.get_body(),
        message_id=_copy_id(queue, original_id),
        application_properties=properties,
        correlation_id=message.correlation_id or None,
        content_type=message.content_type or "application/octet-stream",
    )


def _copy_id(queue: str, original_id: str) -> str:
    if not original_id:  # nothing ties two deliveries together: a fresh id each time
        return uuid.uuid4().hex
    candidate = f"{queue}/{original_id}"
    if len(candidate) <= 128:
        return candidate
    return hashlib.sha256(candidate.encode("utf-8")).hexdigest()
