"""The app's messaging port: what workflow code needs to put a message on a queue.

Scheduler, agents and supervisor depend on this module only; the adapters
(:mod:`orders.messaging.azure`, :mod:`orders.messaging.local`) are not imported here. A
MessageId seen within the queue's duplicate detection window is accepted and silently
dropped, as Azure does.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from azurekit.servicebus import (
    MAX_MESSAGE_ID_LENGTH,
    check_application_properties,
    check_delivery_times,
)

JSON = "application/json"

PropertyValue = str | int | float | bool | None
"""What an application property may hold (checked on construction)."""


@dataclass(frozen=True)
class OutgoingMessage:
    """A message to send, validated on construction.

    ``body``: a JSON-serialisable dict, a str (sent as UTF-8) or bytes (sent as they are).
    ``message_id``: 1-128 characters, derived from the business operation so a resend is dropped
    (A4); a random hex id by default. ``time_to_live`` is capped by the queue's default TTL.

    Raises
    ------
    ValueError
        Naming the field whose value breaks its rule.
    """

    body: dict[str, Any] | str | bytes
    message_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    application_properties: Mapping[str, PropertyValue] = field(default_factory=dict)
    correlation_id: str | None = None
    content_type: str = JSON
    scheduled_enqueue_time: datetime | None = None
    time_to_live: timedelta | None = None

    def __post_init__(self) -> None:
        if isinstance(self.body, dict):
            try:
                self.body_bytes()
            except (TypeError, ValueError) as exc:
                raise ValueError(f"body: must be JSON-serialisable: {exc}") from exc
        elif not isinstance(self.body, str | bytes):
            raise ValueError(f"body: must be a dict, str or bytes, got "
                             f"{type(self.body).__name__}")
        if not isinstance(self.message_id, str) or not (
            0 < len(self.message_id) <= MAX_MESSAGE_ID_LENGTH
        ):
            raise ValueError(
                f"message_id: must be a string of 1-{MAX_MESSAGE_ID_LENGTH} characters, "
                f"got {self.message_id!r}"
            )
        check_application_properties(self.application_properties)
        for name in ("correlation_id", "content_type"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name}: must be a string, got {value!r}")
        check_delivery_times(self.scheduled_enqueue_time, self.time_to_live)

    def body_bytes(self) -> bytes:
        """Return the body as sent: compact UTF-8 JSON for a dict (NaN, infinity rejected)."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        text = json.dumps(self.body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")


@runtime_checkable
class MessageSender(Protocol):
    """Puts messages on Service Bus queues (or their local stand-ins)."""

    def send(self, queue: str, message: OutgoingMessage) -> None:
        """Send one message to ``queue``: :meth:`send_many` of that one message."""
        self.send_many(queue, [message])

    def send_many(self, queue: str, messages: Sequence[OutgoingMessage]) -> None:
        """Send messages to ``queue`` in one broker operation (one batch, at most 256 KB).

        Raises
        ------
        QueueNotFoundError, MessageRejectedError
            No such queue; the batch or a message breaks a Service Bus limit (permanent).
        MessagingUnavailableError
            The broker stayed unreachable or busy through the adapter's retries (retryable).
        MessagingError
            Any other failure, such as a missing role assignment (permanent).
        """
        ...

    def close(self) -> None:
        """Release connections; the sender is unusable afterwards."""
        ...
