"""Settle a trigger's message explicitly: dead-letter it with a reason, never drop it (S1).

Locally by lock token; in Azure by forwarding a copy: docs/deploy.md, "Dead letters in Azure".
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any, Protocol

from orders.messaging.errors import MessagingError
from orders.messaging.port import MessageSender, OutgoingMessage

DEAD_LETTERS_QUEUE = "dead-letters"
"""Where the Azure settler forwards dead-lettered messages (in infra/queues.json)."""

REASON_PROPERTY = "DeadLetterReason"
DESCRIPTION_PROPERTY = "DeadLetterErrorDescription"
SOURCE_PROPERTY = "DeadLetterSource"
"""Application properties of a forwarded message: Service Bus's own dead-letter names."""

MAX_DESCRIPTION = 4096
"""Longest DeadLetterErrorDescription Service Bus keeps (its limit for the header)."""

MAX_MESSAGE_BYTES = 256 * 1024
"""Largest message the Standard tier accepts, body and properties together (infra/app/
servicebus.bicep deploys Standard; Learn: "Service Bus quotas")."""

COPY_OVERHEAD_BYTES = 2 * 1024
"""Room kept for the AMQP framing and system properties of the copy."""

BODY_OMITTED_PROPERTY = "DeadLetterBodyOmitted"
"""Set on a copy sent without the body: the body stays in the source's dead-letter subqueue."""


class OversizedDeadLetter(MessagingError):
    """The dead-letter copy with its body would exceed :data:`MAX_MESSAGE_BYTES`.

    The reason was sent without the body; the original goes back to Service Bus, body intact.
    """


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
        copy = dead_letter_copy(queue, message, reason, description)
        if copy_size(copy) <= MAX_MESSAGE_BYTES:
            self._sender.send(DEAD_LETTERS_QUEUE, copy)
            return
        # Near 256 KB the copy cannot be sent: send the reason without the body, then fail
        # the invocation, so the original is redelivered until maxDeliveryCount and lands,
        # body intact, in the source's own dead-letter subqueue; the copy's fixed MessageId
        # makes the repeats duplicates (docs/deploy.md, "Dead letters in Azure").
        size = len(_bytes(copy.body))
        self._sender.send(DEAD_LETTERS_QUEUE, OutgoingMessage(
            b"", message_id=copy.message_id, correlation_id=copy.correlation_id,
            content_type=copy.content_type,
            application_properties={**copy.application_properties,
                                    BODY_OMITTED_PROPERTY: size}))
        raise OversizedDeadLetter(
            f"dead-letter copy of {queue}/{message.message_id}: {size:,} bytes of body do not "
            f"fit a {MAX_MESSAGE_BYTES:,}-byte message; the reason was sent without the body "
            f"and the message is left to reach {queue}'s dead-letter subqueue")


def copy_size(copy: OutgoingMessage) -> int:
    """Bytes the copy takes on the wire, estimated: body, properties and framing."""
    properties = sum(len(str(k).encode()) + len(str(v).encode())
                     for k, v in copy.application_properties.items())
    return len(_bytes(copy.body)) + properties + COPY_OVERHEAD_BYTES


def _bytes(body: Any) -> bytes:
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


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
