"""Embedded compensation log: one row per order and step, keyed (OrderID, step).

An entry is one ``INSERT ... SELECT`` that numbers it ``MAX(seq) + 1`` (in the row and in its
JSON document) unless its step is logged: one statement, atomic under the file's write lock,
so ``seq`` is unique per order even with several writers. Only an insert that changed
nothing reads the logged entry, to compare it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from functools import partial

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
        One entry is one statement (no BEGIN/COMMIT when it is alone: its insert is atomic).
        """
        check_one_order(entries)
        if not entries:
            return []
        documents = [json.dumps(entry.model_dump(mode="json", by_alias=True),
                                separators=(",", ":")) for entry in entries]
        done, conflict = self._db.transact(partial(_record_in, entries, documents), "query",
                                           one_statement=len(entries) == 1)
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


def _record_in(entries: Sequence[CompensationEntry], documents: list[str],
               conn: sqlite3.Connection
               ) -> tuple[list[Created[CompensationEntry]], ConflictError | None]:
    """``record_all``'s transaction: what each entry became, and the conflict that stopped it.

    The entries before a conflicting one stay written (as ``record``'s one by one would).
    """
    done: list[Created[CompensationEntry]] = []
    for entry, document in zip(entries, documents, strict=True):
        try:
            done.append(_record_one(conn, entry, document))
        except ConflictError as exc:
            return done, exc
    return done, None


def _record_one(conn: sqlite3.Connection, entry: CompensationEntry,
                document: str) -> Created[CompensationEntry]:
    """Insert ``entry`` unless its step is logged, then compare it with the logged one.

    Raises ConflictError as :func:`orders.stores._records.keep_step`. Outside a transaction
    the entry found can have been purged between the insert and the read: then the insert
    runs again.
    """
    while True:
        stored = _insert(conn, entry, document)
        if stored is not None:
            return Created(stored, created=True)
        found = conn.execute(
            "SELECT body FROM compensation_log WHERE order_id = ? AND step = ?",
            (entry.order_key, entry.step.value)).fetchone()
        if found is not None:
            return keep_step(_entry(found["body"]), entry)


_INSERT_SQL = (
    "INSERT INTO compensation_log (order_id, step, seq, classification, retain_until, body) "
    "SELECT :order_id, :step, COALESCE(MAX(seq), 0) + 1, :classification, :retain_until, "
    "json_set(:body, '$.seq', COALESCE(MAX(seq), 0) + 1) "
    "FROM compensation_log WHERE order_id = :order_id "
    "ON CONFLICT (order_id, step) DO NOTHING RETURNING seq")
"""Numbers the entry after the order's last one, in its row and its document (``seq``)."""


def _insert(conn: sqlite3.Connection, entry: CompensationEntry,
            document: str) -> CompensationEntry | None:
    """Insert one entry numbered after the order's last; it as stored, or None if logged."""
    rows = conn.execute(_INSERT_SQL, {
        "order_id": entry.order_key, "step": entry.step.value,
        "classification": entry.classification.value,
        "retain_until": format_utc(entry.retain_until), "body": document}).fetchall()
    return entry.model_copy(update={"seq": rows[0]["seq"]}) if rows else None
