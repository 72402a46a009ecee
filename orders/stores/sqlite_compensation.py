"""Embedded compensation log: one row per order and step, keyed (OrderID, step).

``seq`` is ``MAX(seq) + 1`` in the insert's ``BEGIN IMMEDIATE`` transaction, so it is
unique per order even with several writers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

from orders.models import CompensationEntry, format_utc
from orders.stores._records import keep_step
from orders.stores._sqlite import SqliteAdapter
from orders.stores.errors import ConflictError
from orders.stores.ports import Created, check_count, check_now, check_one_order
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
        return self.record_all([entry])[0]

    def record_all(self, entries: Sequence[CompensationEntry]
                   ) -> list[Created[CompensationEntry]]:
        """See :meth:`orders.stores.ports.CompensationLog.record_all`: one write transaction.

        The documents are dumped before the write lock is taken; under it only ``seq`` is set.
        """
        check_one_order(entries)
        if not entries:
            return []
        documents = [entry.model_dump(mode="json", by_alias=True) for entry in entries]
        done, conflict = self._db.transact(partial(_record_in, entries, documents), "query")
        self._db.count("write", sum(c.created for c in done))
        if conflict is not None:
            raise conflict
        return done

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


def _record_in(entries: Sequence[CompensationEntry], documents: list[dict[str, Any]],
               conn: sqlite3.Connection
               ) -> tuple[list[Created[CompensationEntry]], ConflictError | None]:
    """``record_all``'s transaction: what each entry became, and the conflict that stopped it.

    The entries before a conflicting one stay written (as ``record``'s one by one would).
    """
    order_key = entries[0].order_key
    logged = {row["step"]: row for row in conn.execute(
        "SELECT step, body FROM compensation_log WHERE order_id = ?", (order_key,))}
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM compensation_log "
                       "WHERE order_id = ?", (order_key,)).fetchone()[0]
    done: list[Created[CompensationEntry]] = []
    for entry, document in zip(entries, documents, strict=True):
        found = logged.get(entry.step.value)
        if found is not None:
            try:
                done.append(keep_step(_entry(found["body"]), entry))
            except ConflictError as exc:
                return done, exc
            continue
        seq += 1
        done.append(Created(_insert(conn, entry, document, seq), created=True))
    return done, None


def _insert(conn: sqlite3.Connection, entry: CompensationEntry, document: dict[str, Any],
            seq: int) -> CompensationEntry:
    """Insert one entry numbered ``seq``; return it as stored."""
    document["seq"] = seq
    conn.execute(
        "INSERT INTO compensation_log (order_id, step, seq, classification, retain_until, "
        "body) VALUES (?, ?, ?, ?, ?, ?)",
        (entry.order_key, entry.step.value, seq, entry.classification.value,
         document["retainUntil"], json.dumps(document, separators=(",", ":"))))
    return entry.model_copy(update={"seq": seq})
