"""Embedded compensation log: one row per order and step, keyed (OrderID, step).

``seq`` is ``MAX(seq) + 1`` in the insert's ``BEGIN IMMEDIATE`` transaction, so it is
unique per order even with several writers.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from orders.models import CompensationEntry, format_utc
from orders.stores._records import keep_step
from orders.stores._sqlite import SqliteAdapter
from orders.stores.ports import Created, check_count, check_now
from sqlitekit import write

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS compensation_log (
        order_id       TEXT NOT NULL,              -- OrderID
        step           TEXT NOT NULL,              -- Step value
        seq            INTEGER NOT NULL,           -- order of completion, from 1
        classification TEXT NOT NULL,
        retain_until   TEXT NOT NULL,              -- fixed-width UTC text
        body           TEXT NOT NULL,              -- the entry's JSON document
        PRIMARY KEY (order_id, step),
        UNIQUE (order_id, seq)
    )
    """,
    "CREATE INDEX IF NOT EXISTS ix_compensation_retention ON compensation_log (retain_until)",
)


def _entry(body: str) -> CompensationEntry:
    return CompensationEntry.model_validate(json.loads(body))


class SqliteCompensationLog(SqliteAdapter):
    """Compensation log in a SQLite file (S9, X4)."""

    STORE = "compensation"
    SCHEMA = _SCHEMA

    def record(self, entry: CompensationEntry) -> Created[CompensationEntry]:
        """See :meth:`orders.stores.ports.CompensationLog.record`."""
        row: dict[str, Any] = {"order_id": entry.order_key, "step": entry.step.value}
        with self._db.use("query") as conn:
            with write(conn):
                found = conn.execute(
                    "SELECT body FROM compensation_log WHERE order_id = :order_id "
                    "AND step = :step", row).fetchone()
                if found is None:
                    seq = conn.execute(
                        "SELECT COALESCE(MAX(seq), 0) + 1 FROM compensation_log "
                        "WHERE order_id = ?", (entry.order_key,)).fetchone()[0]
                    stored = entry.model_copy(update={"seq": seq})
                    self._db.count("write")
                    row.update(seq=seq, classification=stored.classification.value,
                               retain_until=format_utc(stored.retain_until),
                               body=stored.model_dump_json())
                    conn.execute(
                        "INSERT INTO compensation_log (order_id, step, seq, classification, "
                        "retain_until, body) VALUES (:order_id, :step, :seq, :classification, "
                        ":retain_until, :body)", row)
                    return Created(stored, created=True)
        return keep_step(_entry(found["body"]), entry)

    def entries(self, order_key: str) -> list[CompensationEntry]:
        """Return the order's entries in ``seq`` order."""
        with self._db.use("query") as conn:
            rows = conn.execute(
                "SELECT body FROM compensation_log WHERE order_id = ? ORDER BY seq",
                (order_key,)).fetchall()
        return [_entry(row["body"]) for row in rows]

    def purge_expired(self, now: datetime, limit: int) -> int:
        """Delete up to ``limit`` expired entries, oldest first; see the port."""
        check_now(now)
        check_count("limit", limit)
        with self._db.use("query") as conn, write(conn):
            cursor = conn.execute(
                "DELETE FROM compensation_log WHERE rowid IN (SELECT rowid FROM "
                "compensation_log WHERE retain_until <= ? ORDER BY retain_until LIMIT ?)",
                (format_utc(now), limit))
            self._db.count("write", cursor.rowcount)
            return cursor.rowcount
