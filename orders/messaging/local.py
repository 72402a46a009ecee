"""The local messaging backend, whole: the adapters over the embedded engine (:mod:`sqlitebus`).

Imported only when the ``local`` backend is chosen, so the app in Azure never loads it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlitebus
from clocks import Clock
from orders.messaging.browse import PeekedMessage, QueueCount, check_peek, parse_body
from orders.messaging.errors import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    QueueNotFoundError,
)
from orders.messaging.port import MessageSender, OutgoingMessage
from orders.messaging.settlement import MAX_DESCRIPTION
from orders.observability.tracing import message_properties
from sqlitekit import is_busy

logger = logging.getLogger(__name__)

MAX_BATCH_BYTES = 256 * 1024
"""Azure Standard tier limit on a batch (bodies plus properties), enforced for parity."""


class LocalMessageSender(MessageSender):
    """A :class:`~orders.messaging.port.MessageSender` over the local Service Bus engine.

    A given ``engine`` is shared, not closed; else one is opened on ``data_dir``.

    Raises
    ------
    ValueError
        If neither ``engine`` nor ``data_dir`` is given.
    """

    def __init__(
        self,
        engine: sqlitebus.ServiceBusEngine | None = None,
        *,
        data_dir: str | Path | None = None,
        queues_file: str | Path | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._owns_engine = engine is None
        if engine is None:
            if data_dir is None:
                raise ValueError("data_dir: required when no engine is given")
            catalog = sqlitebus.load_queue_catalog(queues_file)
            engine = sqlitebus.open_engine(data_dir, catalog=catalog, clock=clock)
        self._engine = engine

    def send_many(self, queue: str, messages: Sequence[OutgoingMessage]) -> None:
        """Send messages in one engine transaction; a busy file (by error code) is retryable."""
        if not messages:
            return
        drafts = [self._to_new_message(message) for message in messages]
        size = sum(len(d.body_bytes) + len(d.properties_json) for d in drafts)
        if len(drafts) > 1 and size > MAX_BATCH_BYTES:
            raise MessageRejectedError(
                f"batch: {size} bytes exceed the Service Bus batch limit of {MAX_BATCH_BYTES}"
            )
        try:
            accepted = self._engine.send_many(queue, drafts)
        except sqlitebus.MessagingEntityNotFoundError as exc:
            # The engine's text already starts with what QueueNotFoundError says.
            raise QueueNotFoundError(queue, str(exc).removeprefix(
                f"queue {queue!r} not found: ")) from exc
        except sqlitebus.ServiceBusError as exc:  # the local host's flag carries over
            error = MessagingUnavailableError if exc.retryable else MessagingError
            raise error(f"queue {queue!r}: {exc}", retry_after=exc.retry_after) from exc
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise MessagingUnavailableError(f"local Service Bus file busy: {exc}") from exc
            raise MessagingError(f"queue {queue!r}: local Service Bus file: {exc}") from exc
        for draft, ok in zip(drafts, accepted, strict=True):
            if not ok:
                logger.debug("duplicate dropped: queue=%s message_id=%s", queue, draft.message_id)

    def close(self) -> None:
        """Close the engine if this sender opened it."""
        if self._owns_engine:
            self._engine.close()

    def _to_new_message(self, message: OutgoingMessage) -> sqlitebus.NewMessage:
        try:
            return sqlitebus.NewMessage(
                message.body_bytes(),
                message_id=message.message_id,
                application_properties=message_properties(message.application_properties),
                content_type=message.content_type,
                correlation_id=message.correlation_id,
                scheduled_enqueue_time=message.scheduled_enqueue_time,
                time_to_live=message.time_to_live,
            )
        except ValueError as exc:  # includes MessageSizeExceededError
            raise MessageRejectedError(f"message {message.message_id!r}: {exc}") from exc


class LocalSettler:
    """Dead-letters by lock token in the embedded Service Bus, engine opened on first use."""

    def __init__(self, data_dir: str | Path, clock: Clock | None = None) -> None:
        self._data_dir = Path(data_dir)
        self._clock = clock
        self._engine: sqlitebus.ServiceBusEngine | None = None
        self._lock = threading.Lock()

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """See :meth:`~orders.messaging.settlement.MessageSettler.dead_letter`."""
        with self._lock:
            if self._engine is None:
                self._engine = sqlitebus.open_engine(str(self._data_dir), clock=self._clock)
            engine = self._engine
        engine.dead_letter(queue, message.lock_token, reason, description[:MAX_DESCRIPTION])


class LocalDepthReader:
    """Dead-letter depths from the embedded Service Bus engine on the host's data folder."""

    def __init__(self, data_dir: str | Path, clock: Clock | None = None) -> None:
        self._data_dir = Path(data_dir)
        self._clock = clock
        self._opened: sqlitebus.ServiceBusEngine | None = None
        self._lock = threading.Lock()

    def dead_letter_depths(self, queues: list[str]) -> dict[str, int]:
        """Return the dead-letter depth of each queue; see :class:`DepthReader`."""
        with self._engine() as engine:
            return {q: engine.counts(q).dead_letter for q in queues}

    @contextmanager
    def _engine(self) -> Iterator[sqlitebus.ServiceBusEngine]:
        """Yield this reader's engine, opened on first use."""
        with self._lock:
            if self._opened is None:
                self._opened = sqlitebus.open_engine(str(self._data_dir), clock=self._clock)
            engine = self._opened
        yield engine

    def close(self) -> None:
        """Close the engine if one was opened."""
        with self._lock:
            if self._opened is not None:
                self._opened.close()
                self._opened = None


class LocalQueueBrowser(LocalDepthReader):
    """Counts and peeks from the local host's engine (:mod:`orders.messaging.browse`)."""

    def queue_counts(self, queues: list[str]) -> dict[str, QueueCount]:
        """Return active and dead-letter counts; see :class:`QueueBrowser`."""
        with self._engine() as engine:
            found = {q: engine.counts(q) for q in queues}
        return {q: QueueCount(c.active, c.dead_letter) for q, c in found.items()}

    def peek(self, queue: str, max_count: int, *, dead_letter: bool = False,
             from_sequence_number: int = 0) -> list[PeekedMessage]:
        """Return up to ``max_count`` messages without locking; see :class:`QueueBrowser`."""
        with self._engine() as engine:
            found = engine.peek(queue, check_peek(max_count), dead_letter=dead_letter,
                                from_sequence_number=from_sequence_number)
        return [PeekedMessage(
            queue=m.queue, sequence_number=m.sequence_number, message_id=m.message_id,
            enqueued_at=m.enqueued_time, delivery_count=m.delivery_count,
            application_properties=dict(m.application_properties), body=parse_body(m.body),
            dead_letter_reason=m.dead_letter_reason,
            dead_letter_description=m.dead_letter_error_description) for m in found]
