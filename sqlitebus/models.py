"""Value objects of the local Service Bus, named as in the azure-servicebus SDK; no SQL here."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from azurekit.servicebus import (
    MAX_MESSAGE_ID_LENGTH,
    check_application_properties,
    check_delivery_times,
)
from sqlitebus.errors import ServiceBusError

MAX_MESSAGE_SIZE_BYTES = 256 * 1024
"""Service Bus Standard tier maximum message size (body plus application properties)."""

DEAD_LETTER_SUFFIX = "/$deadletterqueue"
"""Azure's entity path suffix of a queue's dead-letter subqueue."""


class MessageSizeExceededError(ServiceBusError, ValueError):
    """Body plus application properties exceed 256 KB (Azure: ``MessageSizeExceededError``)."""


@dataclass(frozen=True)
class NewMessage:
    """A message to send, validated on construction (ValueError naming the field).

    ``message_id`` (<= 128 chars) defaults to a uuid4 hex; property values are JSON scalars;
    ``scheduled_enqueue_time`` is aware; ``time_to_live`` is positive, capped at the queue's
    ``defaultMessageTimeToLive``; over :data:`MAX_MESSAGE_SIZE_BYTES`: MessageSizeExceededError.
    """

    body: bytes | str
    message_id: str | None = None
    application_properties: Mapping[str, Any] | None = None
    content_type: str | None = None
    correlation_id: str | None = None
    session_id: str | None = None
    scheduled_enqueue_time: datetime | None = None
    time_to_live: timedelta | None = None

    def __post_init__(self) -> None:
        if self.message_id is None:
            # Frozen dataclass: fill the default once, so every send of this object
            # carries the same MessageId and duplicate detection can drop retries.
            object.__setattr__(self, "message_id", uuid.uuid4().hex)
        if not isinstance(self.body, bytes | str):
            raise ValueError(f"body: must be bytes or str, got {type(self.body).__name__}")
        if not isinstance(self.message_id, str) or not (
            0 < len(self.message_id) <= MAX_MESSAGE_ID_LENGTH
        ):
            raise ValueError(f"message_id: must be a string of 1-{MAX_MESSAGE_ID_LENGTH} chars")
        for name in ("content_type", "correlation_id", "session_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name}: must be a string or None, got {value!r}")
        check_application_properties(self.application_properties or {})
        check_delivery_times(self.scheduled_enqueue_time, self.time_to_live)
        size = len(self.body_bytes) + len(self.properties_json)
        if size > MAX_MESSAGE_SIZE_BYTES:
            raise MessageSizeExceededError(
                f"body+application_properties: {size} bytes exceed the Service Bus maximum "
                f"message size of {MAX_MESSAGE_SIZE_BYTES} bytes"
            )

    @property
    def body_bytes(self) -> bytes:
        """The body as bytes (UTF-8 for a ``str`` body)."""
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body

    @property
    def properties_json(self) -> str:
        """The application properties as a JSON object text."""
        return json.dumps(dict(self.application_properties or {}), separators=(",", ":"))


@dataclass(frozen=True)
class ReceivedMessage:
    """A message from receive (peek-lock) or peek (``lock_token`` None).

    ``queue`` has no dead-letter suffix; ``enqueued_time`` is the scheduled time if scheduled;
    ``delivery_count`` includes this delivery; ``locked_by`` is a local diagnostic.
    """

    queue: str
    from_dead_letter_queue: bool
    body: bytes
    message_id: str
    sequence_number: int
    enqueued_time: datetime
    delivery_count: int
    application_properties: Mapping[str, Any]
    content_type: str | None
    correlation_id: str | None
    session_id: str | None
    scheduled_enqueue_time: datetime | None
    time_to_live: timedelta
    expires_at: datetime
    lock_token: str | None
    locked_until: datetime | None
    locked_by: str | None
    dead_letter_reason: str | None
    dead_letter_error_description: str | None

    @property
    def entity_path(self) -> str:
        """Azure entity path: ``<queue>`` or ``<queue>/$deadletterqueue``."""
        return self.queue + (DEAD_LETTER_SUFFIX if self.from_dead_letter_queue else "")

    @property
    def text(self) -> str:
        """The body as UTF-8 (UnicodeDecodeError if it is not)."""
        return self.body.decode("utf-8")

    def json(self) -> Any:
        """Return the body decoded as JSON (ValueError if it is not UTF-8 JSON)."""
        return json.loads(self.body)


@dataclass(frozen=True)
class QueueCounts:
    """Counts as Service Bus ``CountDetails``; ``active`` includes ``locked`` (a local extra)."""

    active: int
    scheduled: int
    dead_letter: int
    locked: int


@dataclass(frozen=True)
class QueueInfo:
    """A queue known to the engine with its counts."""

    name: str
    counts: QueueCounts
