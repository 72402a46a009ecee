"""Queue counts and peeked messages for operators, locally and in Azure (SPEC S7, X8).

The operator dashboard shows each queue's active and dead-letter counts, the messages in
the dead-letter subqueues with their ``DeadLetterReason`` and
``DeadLetterErrorDescription``, the recent operator alerts and the status messages still
waiting on a client's reply queue. Peeking (browsing) reads messages without locking them
or changing their delivery count, so looking never disturbs a receiver.

The browsers extend the dead-letter depth readers (one object per process,
``Services.depths``):

- :class:`orders.messaging.local.LocalQueueBrowser`: the local host's Service Bus engine;
- :class:`AzureQueueBrowser`: counts from the administration client (the *Manage* right),
  peeks through a ``ServiceBusClient`` built on first use with the process's credential
  (the *Listen* right, role "Azure Service Bus Data Receiver", on the peeked queues).
  Without a right the read fails and the caller shows the reason instead.
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
    """Messages of one queue, as Service Bus counts them.

    ``active``: receivable now or locked by a receiver; ``dead_letter``: in the
    dead-letter subqueue.
    """

    active: int
    dead_letter: int


@dataclass(frozen=True)
class PeekedMessage:
    """A message read by peeking, in the terms both backends share.

    The fields are the Service Bus ones of the same names (``enqueued_at``: UTC;
    ``application_properties`` keyed by text); ``body`` is parsed as JSON, or left as text
    if it is not JSON; ``dead_letter_reason`` and ``dead_letter_description`` say why a
    message of a dead-letter subqueue is there (None elsewhere).
    """

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

        ``dead_letter`` reads the queue's dead-letter subqueue; ``from_sequence_number``
        starts at the first message whose sequence number is at least that (Service Bus
        peek's ``sequence_number``). Raises what the backend raises when the queue cannot
        be read, and ValueError for a bad ``max_count``.
        """
        ...


def peek_newest(browser: QueueBrowser, queue: str, count: int, *,
                dead_letter: bool = False) -> list[PeekedMessage]:
    """Return the ``count`` newest messages of ``queue``, newest first.

    Service Bus peeks forward from a sequence number only, and tells no queue's last
    sequence number; so this finds it by peeking single messages, doubling the step
    until nothing is found and then halving the gap (about 2 log2(N) one-message peeks
    for N sequence numbers), then reads back from there, widening the window over the
    gaps that completed messages leave. Its cost is the same for a queue of ten messages
    as for one of a million, within that logarithm; reading oldest first instead would
    show a flood's first messages and hide what came after it.

    Parameters
    ----------
    browser : QueueBrowser
        Either backend.
    queue : str
        The queue.
    count : int
        1 to :data:`MAX_PEEK`.
    dead_letter : bool
        Read the dead-letter subqueue.

    Returns
    -------
    list of PeekedMessage
        At most ``count``, by descending sequence number.
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
    """Return a message body as JSON if it is JSON, else as text (undecodable bytes replaced)."""
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
    """Counts and peeks from Azure Service Bus (see the module docstring).

    Parameters
    ----------
    namespace : str
        ``<ns>.servicebus.windows.net``.
    credential : azure.core.credentials.TokenCredential
        The process's credential.
    client, data_client : optional
        Administration and data-plane clients (tests); built on first use when None.
    """

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
    """Return an SDK message as a :class:`PeekedMessage`.

    A message the app forwarded to ``dead-letters`` (:mod:`orders.messaging.settlement`)
    carries its reason and description as application properties, under Service Bus's own
    names: they are shown as its dead-letter reason and description.
    """
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
    """AMQP application properties arrive keyed (and often valued) by bytes: make them text."""
    def text(value: Any) -> Any:
        return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value
    return {str(text(k)): text(v) for k, v in properties.items()}

