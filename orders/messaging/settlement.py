"""Settle a trigger's message explicitly: dead-letter it with a reason (SPEC S1).

A bad message must be dead-lettered with its reason, never dropped and never retried into
``MaxDeliveryCountExceeded``. The trigger function asks this port to dead-letter the message
it holds and then returns.

- Local host: :class:`orders.messaging.local.LocalSettler` dead-letters by lock token in
  the embedded Service Bus, as the Functions host's settlement service does; the message
  lands in its queue's dead-letter subqueue.
- Azure: :class:`ForwardingSettler` sends a copy of the message, with the reason, to the
  queue ``dead-letters`` through the app's own ``azure-servicebus`` sender, and the trigger
  then returns normally, so the host's ``autoCompleteMessages`` completes the original.
  If the send fails, the error propagates, the invocation fails, the host abandons the
  message and Service Bus redelivers it: the message is never dropped (at worst it reaches
  ``maxDeliveryCount`` and the native dead-letter subqueue, without the app's reason).
  The Python worker's own settlement client (``azurefunctions-extensions-bindings-
  servicebus``, preview) is not used: docs/deploy.md, "Dead letters in Azure", gives the
  sources.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any, Protocol

from orders.messaging.port import MessageSender, OutgoingMessage

DEAD_LETTERS_QUEUE = "dead-letters"
"""Where the Azure settler forwards dead-lettered messages (a queue of infra/queues.json)."""

REASON_PROPERTY = "DeadLetterReason"
DESCRIPTION_PROPERTY = "DeadLetterErrorDescription"
SOURCE_PROPERTY = "DeadLetterSource"
"""Application properties of a forwarded message: Service Bus's own dead-letter names."""

MAX_DESCRIPTION = 4096
"""Longest DeadLetterErrorDescription Service Bus keeps (its limit for the header)."""


class MessageSettler(Protocol):
    """Dead-letters a message received by a Service Bus trigger."""

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """Move ``message`` to ``queue``'s dead-letter subqueue with a reason.

        Parameters
        ----------
        queue : str
            The queue the trigger reads.
        message : azure.functions.ServiceBusMessage
            The message, holding its lock token.
        reason : str
            DeadLetterReason (short, machine-readable).
        description : str
            DeadLetterErrorDescription (what was wrong, naming the field and rule).
        """
        ...


class ForwardingSettler:
    """Dead-letters in Azure by forwarding a copy to :data:`DEAD_LETTERS_QUEUE`.

    Parameters
    ----------
    sender : MessageSender
        The app's sender (``azure-servicebus`` with the app's identity, which holds Azure
        Service Bus Data Sender on the namespace).
    """

    def __init__(self, sender: MessageSender) -> None:
        self._sender = sender

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """Forward ``message`` with its reason; the host's auto-complete then completes it.

        Raises
        ------
        MessagingError
            The copy could not be sent; raised on so that the invocation fails and
            Service Bus redelivers the message (never dropped, SPEC S1).
        """
        self._sender.send(DEAD_LETTERS_QUEUE, dead_letter_copy(queue, message, reason,
                                                               description))


def dead_letter_copy(queue: str, message: Any, reason: str, description: str
                     ) -> OutgoingMessage:
    """Return the copy of a received message that :class:`ForwardingSettler` sends.

    Parameters
    ----------
    queue : str
        The queue the message was received from.
    message : azure.functions.ServiceBusMessage
        The received message.
    reason, description : str
        DeadLetterReason and DeadLetterErrorDescription (cut to 4096 characters).

    Returns
    -------
    OutgoingMessage
        The body bytes unchanged; ContentType and CorrelationId kept; application
        properties: the original's of text, number or boolean type, then ``DeadLetterReason``,
        ``DeadLetterErrorDescription``, ``DeadLetterSource`` (the queue), the original
        MessageId, delivery count and enqueued time. Its MessageId is fixed by the source
        queue and the original MessageId, so a second forward of the same message (the
        first one sent, its completion lost with the lock) is dropped by duplicate
        detection.
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
