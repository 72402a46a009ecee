"""Queue counts and peeked messages for operators, locally and in Azure (S7, X8).

Peeking never locks or counts a delivery. In Azure counts need *Manage*, peeks *Listen*
(Data Receiver); without the right the caller shows the reason.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from orders.messaging.depths import AzureDepthReader
from orders.messaging.settlement import DEAD_LETTERS_QUEUE, DESCRIPTION_PROPERTY, REASON_PROPERTY

MAX_PEEK = 500
"""Most messages one peek returns (the Service Bus SDK's own batches are smaller)."""


@dataclass(frozen=True)
class QueueCount:
    """Messages of one queue: ``active`` (receivable or locked) and ``dead_letter``."""

    active: int
    dead_letter: int


@dataclass(frozen=True)
class PeekedMessage:
    """A peeked message, Service Bus field names; ``body`` is JSON if it parses, else text."""

    queue: str
    sequence_number: int
    message_id: str | None
    enqueued_at: datetime | None
    delivery_count: int
    application_properties: dict[str, Any]
    body: Any
    dead_letter_reason: str | None
    dead_letter_description: str | None


@runtime_checkable
class QueueBrowser(Protocol):
    """Counts and peeks queues (besides reading dead-letter depths)."""

    def queue_counts(self, queues: list[str]) -> dict[str, QueueCount]:
        """Return the counts of each queue (raises what the backend raises on failure)."""
        ...

    def peek(self, queue: str, max_count: int, *, dead_letter: bool = False,
             from_sequence_number: int = 0) -> list[PeekedMessage]:
        """Return up to ``max_count`` (1..MAX_PEEK) messages, oldest first, without locking.

        Raises
        ------
        ValueError
            For a bad ``max_count``; otherwise what the backend raises.
        """
        ...


def peek_newest(browser: QueueBrowser, queue: str, count: int, *,
                dead_letter: bool = False) -> list[PeekedMessage]:
    """Return the ``count`` (1..MAX_PEEK) newest messages of ``queue``, newest first.

    Service Bus peeks forward only and tells no last sequence number, so this finds it with
    about 2 log2(N) one-message peeks (doubling, then halving the gap) and reads back from
    there: the cost barely grows with the queue, and a flood's first messages cannot hide what
    came after.
    """
    check_peek(count)

    def first_from(sequence: int) -> int | None:
        found = browser.peek(queue, 1, dead_letter=dead_letter, from_sequence_number=sequence)
        return found[0].sequence_number if found else None

    first = first_from(0)
    if first is None:
        return []
    low, step = first, 1  # a message is at ``low``; none at or past ``high``
    while (found := first_from(low + step)) is not None:
        low, step = found, step * 2
    high = low + step
    while high - low > 1:
        middle = (low + high) // 2
        found = first_from(middle)
        low, high = (found, high) if found is not None and found < high else (low, middle)
    span = count
    while True:
        start = max(first, low - span + 1)
        window = _newest_between(browser, queue, start, low, count, dead_letter)
        if len(window) >= count or start == first:
            return window[::-1]
        span *= 2


def peek_older(browser: QueueBrowser, queue: str, before: int, count: int, *,
               dead_letter: bool = False) -> list[PeekedMessage]:
    """Return up to ``count`` (1..MAX_PEEK) messages just older than sequence ``before``.

    Newest first, as :func:`peek_newest`; empty once ``before`` is the queue's first message.
    Fewer come back where sequence numbers have gaps (messages received or expired); the
    caller reads on from the oldest it got.
    """
    check_peek(count)
    oldest = browser.peek(queue, 1, dead_letter=dead_letter)
    if not oldest or oldest[0].sequence_number >= before:
        return []
    first = oldest[0].sequence_number
    while before > first:
        start = max(first, before - count)
        found = _newest_between(browser, queue, start, before - 1, count, dead_letter)
        if found:
            return found[::-1]
        before = start  # a gap of ``count`` sequence numbers: read on from before it
    return []


def _newest_between(browser: QueueBrowser, queue: str, start: int, end: int, count: int,
                    dead_letter: bool) -> list[PeekedMessage]:
    """Return the newest ``count`` messages with ``start <= sequence number <= end``."""
    newest: deque[PeekedMessage] = deque(maxlen=count)
    sequence = start
    while True:
        page = browser.peek(queue, MAX_PEEK, dead_letter=dead_letter,
                            from_sequence_number=sequence)
        newest.extend(m for m in page if m.sequence_number <= end)
        if len(page) < MAX_PEEK or page[-1].sequence_number >= end:
            return list(newest)
        sequence = page[-1].sequence_number + 1


def parse_body(raw: bytes) -> Any:
    """Return a body as JSON if it is JSON, else as text (undecodable bytes replaced)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def check_peek(max_count: int) -> int:
    """Return ``max_count`` if a peek may ask for that many, else raise ValueError."""
    if not 1 <= max_count <= MAX_PEEK:
        raise ValueError(f"max_count: must be from 1 to {MAX_PEEK}; got {max_count}")
    return max_count


class AzureQueueBrowser(AzureDepthReader):
    """Counts and peeks from Azure Service Bus; data-plane client built on first use."""

    def __init__(self, namespace: str, credential: Any, client: Any = None,
                 data_client: Any = None) -> None:
        super().__init__(namespace, credential, client)
        self._data_client = data_client
        self._data_lock = threading.Lock()

    def queue_counts(self, queues: list[str]) -> dict[str, QueueCount]:
        """Return active and dead-letter counts; see :class:`QueueBrowser`."""
        admin = self._admin()
        found = {q: admin.get_queue_runtime_properties(q) for q in queues}
        return {q: QueueCount(p.active_message_count, p.dead_letter_message_count)
                for q, p in found.items()}

    def peek(self, queue: str, max_count: int, *, dead_letter: bool = False,
             from_sequence_number: int = 0) -> list[PeekedMessage]:
        """Return up to ``max_count`` messages without locking; see :class:`QueueBrowser`."""
        from azure.servicebus import ServiceBusSubQueue

        with self._data_lock:
            if self._data_client is None:
                from azure.servicebus import ServiceBusClient

                self._data_client = ServiceBusClient(self._namespace, self._credential)
            client = self._data_client
        sub_queue = ServiceBusSubQueue.DEAD_LETTER if dead_letter else None
        with client.get_queue_receiver(queue, sub_queue=sub_queue) as receiver:
            found = receiver.peek_messages(max_message_count=check_peek(max_count),
                                           sequence_number=from_sequence_number)
        return [_peeked(queue, m) for m in found]

    def close(self) -> None:
        """Close the administration and data-plane clients if they were built."""
        super().close()
        with self._data_lock:
            if self._data_client is not None:
                self._data_client.close()
                self._data_client = None


def _peeked(queue: str, m: Any) -> PeekedMessage:
    """Return an SDK message as a PeekedMessage (``dead-letters``: reason from properties)."""
    properties = _text_keys(m.application_properties or {})
    forwarded = queue == DEAD_LETTERS_QUEUE
    return PeekedMessage(
        queue=queue, sequence_number=m.sequence_number or 0,
        message_id=m.message_id, enqueued_at=m.enqueued_time_utc,
        delivery_count=m.delivery_count or 0, application_properties=properties,
        body=parse_body(b"".join(m.body) if not isinstance(m.body, bytes) else m.body),
        dead_letter_reason=m.dead_letter_reason
        or (properties.get(REASON_PROPERTY) if forwarded else None),
        dead_letter_description=m.dead_letter_error_description
        or (properties.get(DESCRIPTION_PROPERTY) if forwarded else None))


def _text_keys(properties: Mapping[Any, Any]) -> dict[str, Any]:
    """Decode AMQP's bytes keys and values to text."""
    def text(value: Any) -> Any:
        return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value
    return {str(text(k)): text(v) for k, v in properties.items()}

