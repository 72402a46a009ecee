"""The app's messaging port: what workflow code needs to put a message on a queue.

Scheduler, agents and supervisor depend on :class:`MessageSender` and
:class:`OutgoingMessage` only (STYLE 1: workflow logic knows no infrastructure). Two
adapters implement the port: :mod:`orders.messaging.azure` (Azure Service Bus through
azure-servicebus) and :mod:`orders.messaging.local` (the local host's engine). This module
imports neither.
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

    Parameters
    ----------
    body : dict, str or bytes
        A JSON-serialisable dict (sent as compact UTF-8 JSON), a str sent as-is (UTF-8) or
        bytes sent as they are (a received body forwarded unchanged).
    message_id : str
        Duplicate detection key, 1-128 characters. Give a stable id derived from the
        business operation (SPEC A4: stable MessageId per request) so that resends are
        dropped by the broker; defaults to a random uuid4 hex fixed for this object.
    application_properties : Mapping[str, str | int | float | bool | None]
        User properties, for example the order id, for routing and diagnostics.
    correlation_id : str, optional
        CorrelationId, for example the OrderID or the orchestration instance id.
    content_type : str
        ContentType; ``application/json`` by default.
    scheduled_enqueue_time : datetime, optional
        Timezone-aware ScheduledEnqueueTimeUtc; not receivable before it.
    time_to_live : timedelta, optional
        Positive TTL; the queue's ``defaultMessageTimeToLive`` caps it.

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
        """Return the body as sent on the wire.

        Returns
        -------
        bytes
            Compact UTF-8 JSON for a dict body (NaN and infinity rejected); the UTF-8
            encoding of a str body; a bytes body as it is.
        """
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        text = json.dumps(self.body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")


@runtime_checkable
class MessageSender(Protocol):
    """Puts messages on Service Bus queues (or their local stand-ins).

    A message whose MessageId the queue has seen within its duplicate detection window
    is accepted and silently dropped, as Azure does; callers cannot tell and need not.
    Errors are :class:`~orders.messaging.errors.MessagingError` subclasses.
    """

    def send(self, queue: str, message: OutgoingMessage) -> None:
        """Send one message to ``queue``: :meth:`send_many` of that one message.

        Senders that subclass this protocol inherit this; its errors are those of
        :meth:`send_many`.
        """
        self.send_many(queue, [message])

    def send_many(self, queue: str, messages: Sequence[OutgoingMessage]) -> None:
        """Send messages to ``queue`` in one broker operation (one Service Bus batch).

        A batch is limited to the maximum message size in total (256 KB on Standard);
        larger batches raise :class:`~orders.messaging.errors.MessageRejectedError`.
        """
        ...

    def close(self) -> None:
        """Release connections; the sender is unusable afterwards."""
        ...
