"""Value objects of the local Service Bus: messages going in, messages coming out, counts.

Kept apart from the engine so that adapters and the host's trigger dispatch can use the
types without touching SQL. Names follow the azure-servicebus SDK where one exists
(``message_id``, ``sequence_number``, ``delivery_count``, ``lock_token``,
``dead_letter_reason``, ``dead_letter_error_description``).
"""

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
    """A message to send, validated on construction.

    Parameters
    ----------
    body : bytes or str
        Payload; ``str`` is stored as UTF-8.
    message_id : str, optional
        Duplicate detection key, at most 128 characters; a uuid4 hex is generated if None.
    application_properties : Mapping[str, str | int | float | bool | None], optional
        User properties (JSON scalars only in the local host).
    content_type, correlation_id, session_id : str, optional
        Stored and returned as given; sessions are not emulated.
    scheduled_enqueue_time : datetime, optional
        Timezone-aware; the message is not receivable before it.
    time_to_live : timedelta, optional
        Positive; capped at the queue's ``defaultMessageTimeToLive`` as Azure does.

    Raises
    ------
    ValueError
        Naming the field, when a value breaks its rule.
    MessageSizeExceededError
        When body plus properties exceed :data:`MAX_MESSAGE_SIZE_BYTES`.
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
    """A message as returned by receive (peek-lock) or peek (then lock fields are None).

    Attributes
    ----------
    queue : str
        The queue (without the dead-letter suffix).
    from_dead_letter_queue : bool
        True when it came from ``<queue>/$deadletterqueue``.
    body : bytes
        Payload.
    message_id : str
        MessageId (duplicate detection key).
    sequence_number : int
        Unique, increasing number assigned at send.
    enqueued_time : datetime
        When it became receivable (the scheduled time for scheduled messages), UTC.
    delivery_count : int
        Number of peek-lock deliveries so far, including this one.
    application_properties : Mapping[str, Any]
        User properties.
    content_type, correlation_id, session_id : str or None
        As sent.
    scheduled_enqueue_time : datetime or None
        ScheduledEnqueueTimeUtc, if it was scheduled.
    time_to_live : timedelta
        Effective TTL.
    expires_at : datetime
        ``enqueued_time + time_to_live``.
    lock_token : str or None
        Token to settle with; None for peeked messages.
    locked_until : datetime or None
        Lock expiry; None for peeked messages not currently locked.
    locked_by : str or None
        ``lock_owner`` of the receive holding the lock (local diagnostic, not in Azure).
    dead_letter_reason, dead_letter_error_description : str or None
        ``DeadLetterReason`` / ``DeadLetterErrorDescription`` of dead-lettered messages.
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
        """The body decoded as UTF-8 (raises ``UnicodeDecodeError`` if it is not UTF-8)."""
        return self.body.decode("utf-8")

    def json(self) -> Any:
        """Return the body decoded as JSON.

        Raises
        ------
        ValueError
            If the body is not UTF-8 JSON.
        """
        return json.loads(self.body)


@dataclass(frozen=True)
class QueueCounts:
    """Message counts of one queue, as Service Bus ``CountDetails`` reports them.

    Attributes
    ----------
    active : int
        Receivable now or locked (Azure counts locked messages as active).
    scheduled : int
        Scheduled for a later enqueue time.
    dead_letter : int
        In the dead-letter subqueue.
    locked : int
        Subset of ``active`` currently under a peek-lock (local diagnostic).
    """

    active: int
    scheduled: int
    dead_letter: int
    locked: int


@dataclass(frozen=True)
class QueueInfo:
    """A queue known to the engine with its counts."""

    name: str
    counts: QueueCounts
