"""SQLite schema of ``<data_dir>/servicebus.sqlite``, versioned by ``PRAGMA user_version``.

Dead-lettering is a flag on the row, so it keeps the sequence number as Azure does; times
are integer epoch microseconds (exact, indexable); operation counts are what Service Bus bills.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from sqlitebus.errors import ServiceBusError
from sqlitekit import write

SCHEMA_VERSION = 1
"""Value of ``PRAGMA user_version`` this code reads and writes."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_US = (datetime(9999, 12, 31, tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)
"""Upper bound for stored times, so an 'infinite' TTL (Azure's P10675199D) stays a datetime."""

_DDL = """
CREATE TABLE IF NOT EXISTS queues (
    name        TEXT PRIMARY KEY,          -- lower case (entity names are case-insensitive)
    created_us  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    seq                     INTEGER PRIMARY KEY AUTOINCREMENT,  -- SequenceNumber, never reused
    queue                   TEXT NOT NULL,
    dead_letter             INTEGER NOT NULL DEFAULT 0,  -- 1: in <queue>/$deadletterqueue
    message_id              TEXT NOT NULL,
    body                    BLOB NOT NULL,
    content_type            TEXT,
    correlation_id          TEXT,
    session_id              TEXT,
    application_properties  TEXT NOT NULL,             -- JSON object
    enqueued_us             INTEGER NOT NULL,          -- receivable from (scheduled time)
    scheduled_us            INTEGER,                   -- ScheduledEnqueueTimeUtc or NULL
    ttl_us                  INTEGER NOT NULL,
    expires_us              INTEGER NOT NULL,
    delivery_count          INTEGER NOT NULL DEFAULT 0,
    lock_token              TEXT UNIQUE,               -- NULL when not locked
    locked_until_us         INTEGER,
    locked_by               TEXT,
    dead_letter_reason      TEXT,
    dead_letter_description TEXT
);
-- Receive, peek and counts: equality on (queue, dead_letter), range on enqueued_us (future
-- scheduled messages are never scanned), then FIFO by sequence number without a sort.
CREATE INDEX IF NOT EXISTS messages_receive
    ON messages (queue, dead_letter, enqueued_us, seq);
CREATE TABLE IF NOT EXISTS duplicate_history (
    queue         TEXT NOT NULL,
    message_id    TEXT NOT NULL,
    first_sent_us INTEGER NOT NULL,
    PRIMARY KEY (queue, message_id)
) WITHOUT ROWID;
-- Pruning entries older than the queue's duplicate detection window.
CREATE INDEX IF NOT EXISTS duplicate_history_age ON duplicate_history (queue, first_sent_us);
"""

_COUNTS_DDL = """
CREATE TABLE IF NOT EXISTS operation_counts (
    queue      TEXT NOT NULL,
    operation  TEXT NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (queue, operation)
) WITHOUT ROWID
"""
"""Operations per queue; added to version-1 files that lack it, so no version change."""


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables of a new file; ServiceBusError for another version (no migration)."""
    with write(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            # Statement by statement: executescript() would COMMIT our transaction first.
            # (No ';' inside the DDL's comments.)
            for statement in _DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise ServiceBusError(
                f"servicebus file has schema version {version}, this code needs "
                f"{SCHEMA_VERSION}; delete the file (local data only) or update the code"
            )
        conn.execute(_COUNTS_DDL)


class OperationTally:
    """The operation counts of one transaction, written by one statement before it commits.

    Operations :meth:`add` to it inside a group commit's transaction
    (:class:`sqlitekit.group_commit.GroupCommit`), whose ``before_commit`` is :meth:`flush`
    and ``after_rollback`` :meth:`discard`: the counts are in the same transaction as the
    operations they count, so the totals are what one upsert per operation gave.
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, queue: str, operation: str, n: int = 1) -> None:
        """Add ``n`` to the count of ``operation`` on ``queue`` (0 adds nothing)."""
        if n:
            key = (queue, operation)
            self._counts[key] = self._counts.get(key, 0) + n

    def flush(self, conn: sqlite3.Connection) -> None:
        """Add the counts to ``operation_counts`` in one statement, in the caller's transaction."""
        if not self._counts:
            return
        items = list(self._counts.items())
        self._counts.clear()
        conn.execute(
            "INSERT INTO operation_counts (queue, operation, count) VALUES "
            + ", ".join(["(?, ?, ?)"] * len(items))
            + " ON CONFLICT (queue, operation) DO UPDATE SET count = count + excluded.count",
            [value for (queue, operation), n in items for value in (queue, operation, n)],
        )

    def discard(self) -> None:
        """Forget the counts of a transaction that rolled back."""
        self._counts.clear()


_ONE_US = timedelta(microseconds=1)


def to_us(when: datetime) -> int:
    """Convert an aware datetime to epoch microseconds."""
    return (when - EPOCH) // _ONE_US


def from_us(us: int) -> datetime:
    """Convert epoch microseconds to a UTC datetime."""
    return EPOCH + _ONE_US * us


def span_us(delta: timedelta) -> int:
    """Convert a duration to integer microseconds."""
    return delta // _ONE_US
