"""The local Service Bus engine: send, peek-lock receive and settlement on one SQLite file.

Handlers must meet Azure's delivery semantics with no cloud (S1, A4, X1, X7), so these are
emulated, not simplified; queue properties come from ``infra/queues.json`` (what Bicep
deploys, :mod:`azurekit.queues`) and all time from an injected clock.

- Peek-lock: a delivery increments ``delivery_count`` (1 at first), issues a new lock token
  and locks until ``now + lockDuration``; ``complete`` removes the message, ``abandon``
  releases it at once (count kept), ``renew_lock`` extends, ``dead_letter`` moves it to
  ``<queue>/$deadletterqueue`` with ``DeadLetterReason``/``DeadLetterErrorDescription``.
  An expired, superseded or settled token raises ``MessageLockLostError``.
- An expired lock redelivers the message; once delivered ``maxDeliveryCount`` times, an
  expiry or abandon dead-letters it with ``MaxDeliveryCountExceeded``.
- Duplicate detection silently drops a MessageId sent within
  ``duplicateDetectionHistoryTimeWindow`` of its first send, even if that was completed.
- TTL is capped at ``defaultMessageTimeToLive``; an expired message is dead-lettered
  (``TTLExpiredException``) if ``deadLetteringOnMessageExpiration``, else discarded;
  dead-lettered messages never expire.
- Scheduled messages are invisible until due; order is enqueued time, then sequence
  number; names are case-insensitive; an unknown queue raises
  ``MessagingEntityNotFoundError``; send batches are atomic; 256 KB per message.

Each operation runs in an IMMEDIATE transaction, alone or with other threads' operations of
the process (group commit, :mod:`sqlitekit.group_commit`), so processes share the file and
a killed receiver loses nothing. Broker rules apply when a receive reaches a message (or
:meth:`ServiceBusEngine.sweep`, for truthful counts of unread queues), not on a timer.
Not emulated: sessions (stored only), topics, receive-and-delete, deferral, forwarding,
cross-entity transactions, partitioning, quotas, Azure's waiting receive (the host polls);
property values are JSON scalars. Classes: EngineBase <- Settlement <- ServiceBusEngine.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from azurekit.queues import QueueCatalog, QueueProperties
from clocks import Clock
from sqlitebus import rows
from sqlitebus.base import FILE_NAME
from sqlitebus.models import DEAD_LETTER_SUFFIX, NewMessage, QueueCounts, QueueInfo, ReceivedMessage
from sqlitebus.schema import MAX_US, from_us, span_us
from sqlitebus.settlement import Settlement
from sqlitekit import first_of_each, insert_rows, write

__all__ = ["FILE_NAME", "ServiceBusEngine", "open_engine"]

logger = logging.getLogger(__name__)

PRUNE_EVERY_US = 1_000_000
"""Microseconds between prunes of a queue's duplicate detection history, at least."""

# A receive's next candidates (unlocked, visible, oldest first), in one statement: those
# the broker rules let through (:func:`sqlitebus.rows.apply_broker_rules`: not expired,
# delivered fewer than maxDeliveryCount times; any on a dead-letter subqueue) are locked;
# the others are returned unchanged (their locked_until_us stays NULL or past), for the
# rules to move them in the same transaction. SET expressions read the row's old values.
_TAKEN = "(:any OR (expires_us > :now AND delivery_count < :max_delivery))"
_LOCK_CANDIDATES = f"""
    UPDATE messages SET
      delivery_count = CASE WHEN {_TAKEN} THEN delivery_count + 1 ELSE delivery_count END,
      lock_token = CASE WHEN {_TAKEN} THEN sb_new_lock_token() ELSE lock_token END,
      locked_until_us = CASE WHEN {_TAKEN} THEN :until ELSE locked_until_us END,
      locked_by = CASE WHEN {_TAKEN} THEN :owner ELSE locked_by END
    WHERE seq IN (
      SELECT seq FROM messages
      WHERE queue = :queue AND dead_letter = :dead_letter AND enqueued_us <= :now
        AND (locked_until_us IS NULL OR locked_until_us <= :now)
      ORDER BY enqueued_us, seq LIMIT :limit)
    RETURNING *
"""

# The rows _LOCK_CANDIDATES reaches, read without a write transaction: an idle receive ends here.
_ANY_CANDIDATE = """
    SELECT 1 FROM messages
    WHERE queue = ? AND dead_letter = ? AND enqueued_us <= ?
      AND (locked_until_us IS NULL OR locked_until_us <= ?)
    LIMIT 1
"""


def _check_max_count(max_count: int) -> None:
    if isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 1:
        raise ValueError(f"max_count: must be a positive integer, got {max_count!r}")


class ServiceBusEngine(Settlement):
    """Service Bus queues; a method given an unknown queue raises MessagingEntityNotFoundError."""

    # -- sending ---------------------------------------------------------------------

    def send(
        self,
        queue: str,
        body: bytes | str,
        *,
        message_id: str | None = None,
        application_properties: Mapping[str, Any] | None = None,
        content_type: str | None = None,
        correlation_id: str | None = None,
        session_id: str | None = None,
        scheduled_enqueue_time: datetime | None = None,
        time_to_live: timedelta | None = None,
    ) -> bool:
        """Send one :class:`~sqlitebus.models.NewMessage`; False if dropped as a duplicate.

        Raises ValueError naming a field that breaks its rule.
        """
        message = NewMessage(
            body,
            message_id=message_id,
            application_properties=application_properties,
            content_type=content_type,
            correlation_id=correlation_id,
            session_id=session_id,
            scheduled_enqueue_time=scheduled_enqueue_time,
            time_to_live=time_to_live,
        )
        return self.send_many(queue, [message])[0]

    def send_many(self, queue: str, messages: Iterable[NewMessage]) -> list[bool]:
        """Send messages in one transaction (an Azure batch); per message, False if a duplicate.

        Raises ValueError for a dead-letter path or an item that is not a NewMessage.
        """
        name, dead_letter, props = self._entity(queue, False)
        if dead_letter:
            raise ValueError(f"queue: cannot send to a dead-letter subqueue ({queue!r})")
        batch = list(messages)
        for index, message in enumerate(batch):
            if not isinstance(message, NewMessage):
                raise ValueError(f"messages[{index}]: must be a NewMessage")
        accepted = self._group.run(partial(self._insert, name, props, batch))
        self._registered.add(name)
        self._made_receivable(name, sum(accepted))
        return accepted

    # -- receiving -------------------------------------------------------------------

    def receive(
        self,
        queue: str,
        max_count: int = 1,
        lock_owner: str | None = None,
        *,
        dead_letter: bool = False,
        seen_ready: bool = False,
    ) -> list[ReceivedMessage]:
        """Peek-lock up to ``max_count`` (>= 1, else ValueError) messages, oldest first.

        ``queue`` may be a dead-letter path; ``lock_owner`` is kept as ``locked_by``.
        An empty queue costs one read and no write transaction; ``seen_ready``: the caller
        has just read that a message is receivable (:meth:`next_visible_of`), so that read
        is not made again (if the message went meanwhile, the transaction finds none).
        """
        _check_max_count(max_count)
        name, dead_letter, props = self._entity(queue, dead_letter)
        if not seen_ready and name in self._registered \
                and not self._any_candidate(name, dead_letter):
            return []
        received = self._group.run(
            partial(self._lock_next, name, props, max_count, lock_owner, dead_letter))
        self._registered.add(name)
        return received

    def peek(
        self,
        queue: str,
        max_count: int = 1,
        *,
        dead_letter: bool = False,
        from_sequence_number: int = 0,
    ) -> list[ReceivedMessage]:
        """Browse by sequence number (from ``from_sequence_number``) without locking.

        Like Azure's: locked, scheduled and expired messages included, never lock tokens.
        """
        _check_max_count(max_count)
        name, dead_letter, _ = self._entity(queue, dead_letter)
        with self._lock:
            found = self._conn.execute(
                "SELECT * FROM messages WHERE queue = ? AND dead_letter = ? AND seq >= ?"
                " ORDER BY seq LIMIT ?",
                (name, int(dead_letter), from_sequence_number, max_count),
            ).fetchall()
        return [rows.to_message(row, with_lock=False) for row in found]

    # -- housekeeping and visibility --------------------------------------------------

    def sweep(self, queue: str | None = None) -> int:
        """Apply TTL and max delivery to unlocked messages (one queue or all); return how many."""
        names = [self._entity(queue, False)[0]] if queue is not None else self._known_names()
        moved = 0
        with self._lock, write(self._conn) as conn:
            now = self._now_us()
            for name in names:
                props = self._catalog.resolve(name)
                if props is None:
                    continue
                stale = conn.execute(
                    "SELECT seq, delivery_count, expires_us FROM messages"
                    " WHERE queue = ? AND dead_letter = 0 AND enqueued_us <= ?"
                    " AND (locked_until_us IS NULL OR locked_until_us <= ?)"
                    " AND (expires_us <= ? OR delivery_count >= ?)",
                    (name, now, now, now, props.max_delivery_count),
                ).fetchall()
                moved += sum(rows.apply_broker_rules(conn, name, r, props, now) for r in stale)
        return moved

    def counts(self, queue: str) -> QueueCounts:
        """Return active, scheduled, dead-letter and locked counts of one queue."""
        name, _, _ = self._entity(queue, False)
        with self._lock:
            return rows.counts(self._conn, self._now_us(), name).get(name, rows.ZERO_COUNTS)

    def list_queues(self) -> list[QueueInfo]:
        """Return every declared queue and every reply queue used so far, with counts."""
        with self._lock:
            all_counts = rows.counts(self._conn, self._now_us(), None)
        return [
            QueueInfo(name, all_counts.get(name, rows.ZERO_COUNTS)) for name in self._known_names()
        ]

    def first_sent(self, queue: str) -> dict[str, datetime]:
        """Return the duplicate detection history: MessageId -> first enqueued time.

        Kept for the window after the message is gone (the demo's latency measure reads it).
        """
        name, _, _ = self._entity(queue, False)
        with self._lock:
            found = self._conn.execute(
                "SELECT message_id, first_sent_us FROM duplicate_history WHERE queue = ?",
                (name,)).fetchall()
        return {message_id: from_us(us) for message_id, us in found}

    def next_visible(self, queue: str) -> datetime | None:
        """Return when the next active message is receivable (enqueued or lock expiry), or None."""
        return self.next_visible_of([queue]).get(queue)

    def next_visible_of(self, queues: Iterable[str]) -> dict[str, datetime]:
        """Return :meth:`next_visible` of several queues in one read, keyed as given.

        A queue with no active message is left out; a time not after the clock's now means
        a receive finds a message there (the rows :meth:`receive` locks: the same read).
        """
        given = {self._entity(q, False)[0]: q for q in queues}
        if not given:
            return {}
        marks = ", ".join("?" * len(given))
        with self._lock:
            found = self._conn.execute(
                "SELECT queue, MIN(MAX(enqueued_us, COALESCE(locked_until_us, 0)))"
                f" FROM messages WHERE dead_letter = 0 AND queue IN ({marks}) GROUP BY queue",
                tuple(given)).fetchall()
        return {given[name]: from_us(us) for name, us in found}

    # -- internals -------------------------------------------------------------------

    def _insert(self, name: str, props: QueueProperties, batch: list[NewMessage],
                conn: sqlite3.Connection) -> list[bool]:
        """Insert a send's messages: one operation of a group commit (sqlitekit.group_commit)."""
        now = self._now_us()
        self._register(conn, name, now)
        dedup = props.requires_duplicate_detection
        horizon = now - span_us(props.duplicate_detection_history_time_window)
        if dedup:
            self._prune_duplicate_history(conn, name, now, horizon)
        ids = [m.message_id for m in batch]
        accepted = self._remember(conn, name, ids, now, horizon) if dedup else [True] * len(ids)
        for message_id, kept in zip(ids, accepted, strict=True):
            if not kept:
                logger.debug("duplicate dropped: queue=%s id=%s", name, message_id)
        rows.insert_many(conn, name, [m for m, kept in zip(batch, accepted, strict=True)
                                      if kept], props, now)
        self._tally.add(name, "send_calls")
        self._tally.add(name, "sent", sum(accepted))
        return accepted

    def _lock_next(self, name: str, props: QueueProperties, max_count: int,
                   lock_owner: str | None, dead_letter: bool,
                   conn: sqlite3.Connection) -> list[ReceivedMessage]:
        """Lock the messages of a receive: one operation of a group commit."""
        now = self._now_us()
        self._register(conn, name, now)
        locked_until = min(now + span_us(props.lock_duration), MAX_US)
        args = {"any": int(dead_letter), "now": now, "max_delivery": props.max_delivery_count,
                "until": locked_until, "owner": lock_owner, "queue": name,
                "dead_letter": int(dead_letter)}
        found: list[ReceivedMessage] = []
        while len(found) < max_count:
            wanted = max_count - len(found)
            reached = conn.execute(_LOCK_CANDIDATES, {**args, "limit": wanted}).fetchall()
            for row in sorted(reached, key=lambda r: (r["enqueued_us"], r["seq"])):
                if row["locked_until_us"] == locked_until:  # lockDuration >= 5 s: not a past
                    found.append(rows.to_message(row, with_lock=True))
                else:
                    rows.apply_broker_rules(conn, name, row, props, now)
            if len(reached) < wanted:  # every candidate reached: none is left
                break
        self._tally.add(_counted(name, dead_letter), "receive_calls")
        self._tally.add(_counted(name, dead_letter), "delivered", len(found))
        return found

    def _any_candidate(self, name: str, dead_letter: bool) -> bool:
        # A message becoming receivable after this read is found by the next receive, as
        # if this receive had come a moment earlier; nothing is skipped or reordered.
        with self._lock:
            now = self._now_us()
            found = self._conn.execute(_ANY_CANDIDATE, (name, int(dead_letter), now, now))
            return found.fetchone() is not None

    def _prune_duplicate_history(self, conn: sqlite3.Connection, name: str, now: int,
                                 horizon: int) -> None:
        # Space only, at most once a second per queue: _remember ignores what is past the
        # window whether or not it was pruned yet. (A rolled-back batch merely skips one.)
        last = self._pruned_us.get(name)
        if last is not None and 0 <= now - last < PRUNE_EVERY_US:
            return
        conn.execute("DELETE FROM duplicate_history WHERE queue = ? AND first_sent_us <= ?",
                     (name, horizon))
        self._pruned_us[name] = now

    @staticmethod
    def _remember(conn: sqlite3.Connection, name: str, message_ids: list[str | None],
                  now: int, horizon: int) -> list[bool]:
        # Per message, in order: True if new, or first sent at or before the window's start
        # (as if pruned); a MessageId again later in the batch is a duplicate of the first.
        # One upsert for the batch: RETURNING gives the rows it inserted or updated.
        unique = list(dict.fromkeys(message_ids))
        return first_of_each(message_ids, {row[0] for row in insert_rows(
            conn, "INSERT INTO duplicate_history (queue, message_id, first_sent_us) VALUES",
            [(name, message_id, now) for message_id in unique],
            " ON CONFLICT (queue, message_id) DO UPDATE SET first_sent_us ="
            " excluded.first_sent_us WHERE first_sent_us <= ? RETURNING message_id",
            (horizon,))})


def _counted(name: str, dead_letter: bool) -> str:
    return name + DEAD_LETTER_SUFFIX if dead_letter else name


def open_engine(
    data_dir: str | Path,
    *,
    catalog: QueueCatalog | None = None,
    clock: Clock | None = None,
) -> ServiceBusEngine:
    """Open ``<data_dir>/servicebus.sqlite`` (default catalog: ``infra/queues.json``); close it."""
    return ServiceBusEngine.in_data_dir(data_dir, catalog=catalog, clock=clock)
