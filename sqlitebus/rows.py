"""Row-level SQL of the engine; every function runs in a transaction the caller opened."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from datetime import timedelta

from azurekit.queues import QueueProperties
from sqlitebus.models import NewMessage, QueueCounts, ReceivedMessage
from sqlitebus.schema import MAX_US, from_us, span_us, to_us
from sqlitekit import insert_rows

logger = logging.getLogger(__name__)

MAX_DELIVERY_COUNT_EXCEEDED = "MaxDeliveryCountExceeded"
"""Azure's ``DeadLetterReason`` after ``maxDeliveryCount`` deliveries."""

TTL_EXPIRED = "TTLExpiredException"
"""Azure's ``DeadLetterReason`` for an expired message on a queue that dead-letters on expiry."""

ZERO_COUNTS = QueueCounts(active=0, scheduled=0, dead_letter=0, locked=0)


_INSERT_MESSAGES = (
    "INSERT INTO messages (queue, message_id, body, content_type, correlation_id,"
    " session_id, application_properties, enqueued_us, scheduled_us, ttl_us, expires_us)"
    " VALUES"
)


def insert_many(conn: sqlite3.Connection, queue: str, messages: Sequence[NewMessage],
                props: QueueProperties, now: int) -> None:
    """Store messages, sequence numbers in the given order (TTL capped at the queue's, as Azure).

    One multi-row INSERT for a batch (:func:`sqlitekit.insert_rows`).
    """
    insert_rows(conn, _INSERT_MESSAGES, [_values(queue, m, props, now) for m in messages])


def _values(queue: str, message: NewMessage, props: QueueProperties,
            now: int) -> tuple[object, ...]:
    scheduled = to_us(message.scheduled_enqueue_time) if message.scheduled_enqueue_time else None
    enqueued = max(now, scheduled) if scheduled is not None else now
    ttl = props.default_message_time_to_live
    if message.time_to_live is not None:
        ttl = min(ttl, message.time_to_live)
    ttl_us = span_us(ttl)
    return (queue, message.message_id, message.body_bytes, message.content_type,
            message.correlation_id, message.session_id, message.properties_json, enqueued,
            scheduled, ttl_us, min(enqueued + ttl_us, MAX_US))


def apply_broker_rules(
    conn: sqlite3.Connection,
    queue: str,
    row: sqlite3.Row,
    props: QueueProperties,
    now: int,
    *,
    check_expiry: bool = True,
) -> bool:
    """Dead-letter or discard an unlocked active message if Azure would; True if it left.

    ``row`` needs ``seq``, ``delivery_count``, ``expires_us``; ``now`` is epoch microseconds;
    abandon passes ``check_expiry=False`` (the message was valid when locked).
    """
    if check_expiry and row["expires_us"] <= now:
        if props.dead_lettering_on_message_expiration:
            move_to_dead_letter(
                conn, queue, row["seq"], TTL_EXPIRED, "The message expired and was dead lettered."
            )
        else:
            conn.execute("DELETE FROM messages WHERE seq = ?", (row["seq"],))
            logger.info("message expired and discarded: queue=%s seq=%s", queue, row["seq"])
        return True
    if row["delivery_count"] >= props.max_delivery_count:
        move_to_dead_letter(
            conn,
            queue,
            row["seq"],
            MAX_DELIVERY_COUNT_EXCEEDED,
            f"Message could not be consumed after {props.max_delivery_count} delivery attempts.",
        )
        return True
    return False


def move_to_dead_letter(
    conn: sqlite3.Connection, queue: str, seq: int, reason: str | None, description: str | None
) -> None:
    """Move a message to the dead-letter subqueue, unlocked, keeping its sequence number."""
    conn.execute(
        "UPDATE messages SET dead_letter = 1, lock_token = NULL, locked_until_us = NULL,"
        " locked_by = NULL, dead_letter_reason = ?, dead_letter_description = ?"
        " WHERE seq = ?",
        (reason, description, seq),
    )
    logger.info("dead-lettered: queue=%s seq=%s reason=%s", queue, seq, reason)


def to_message(row: sqlite3.Row, *, with_lock: bool) -> ReceivedMessage:
    """Build a :class:`ReceivedMessage` from a row; ``with_lock=False`` (peek) hides the token."""
    locked_until = row["locked_until_us"]
    return ReceivedMessage(
        queue=row["queue"],
        from_dead_letter_queue=bool(row["dead_letter"]),
        body=bytes(row["body"]),
        message_id=row["message_id"],
        sequence_number=row["seq"],
        enqueued_time=from_us(row["enqueued_us"]),
        delivery_count=row["delivery_count"],
        application_properties=json.loads(row["application_properties"]),
        content_type=row["content_type"],
        correlation_id=row["correlation_id"],
        session_id=row["session_id"],
        scheduled_enqueue_time=(
            from_us(row["scheduled_us"]) if row["scheduled_us"] is not None else None
        ),
        time_to_live=timedelta(microseconds=row["ttl_us"]),
        expires_at=from_us(row["expires_us"]),
        lock_token=row["lock_token"] if with_lock else None,
        locked_until=from_us(locked_until) if locked_until is not None else None,
        locked_by=row["locked_by"],
        dead_letter_reason=row["dead_letter_reason"],
        dead_letter_error_description=row["dead_letter_description"],
    )


def counts(conn: sqlite3.Connection, now: int, queue: str | None) -> dict[str, QueueCounts]:
    """Count messages per queue (one queue, or all when ``queue`` is None)."""
    where = "WHERE queue = ?" if queue is not None else ""
    found = conn.execute(
        "SELECT queue,"
        " COALESCE(SUM(dead_letter = 0 AND enqueued_us <= ?), 0),"
        " COALESCE(SUM(dead_letter = 0 AND enqueued_us > ?), 0),"
        " COALESCE(SUM(dead_letter = 1), 0),"
        " COALESCE(SUM(dead_letter = 0 AND locked_until_us > ?), 0)"
        f" FROM messages {where} GROUP BY queue",
        (now, now, now, *((queue,) if queue is not None else ())),
    ).fetchall()
    return {row[0]: QueueCounts(row[1], row[2], row[3], row[4]) for row in found}
