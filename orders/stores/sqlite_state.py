"""Embedded state store in a SQLite file, with the indexes the scans need.

The ETag is a new UUID per write; a conditional write is one ``UPDATE ... WHERE etag = ?``
(a claim's count of Processing records in it), atomic on its own, so writers in any number
of processes serialise on the file; only a write that changed nothing reads the record
after it, to tell a stale ETag from a missing record or a full house.
Each query is one index range, keyset-paged (the token is the last key returned):

* ``ix_state_startable`` (partial, ``locked_by IS NULL``) for the starter: no hold is
  stored as ``not_before = ''``, which sorts before every time, so no OR is needed;
* ``ix_state_deadline`` for both supervisor scans (``''`` is again the lowest bound);
* ``ix_state_by_state`` for operators, ``ix_state_recent`` for the dashboard (covering).

Opening a file of an older schema version adds the columns it lacks, with the older
version's meaning as default (X6).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from clocks import Clock, SystemClock
from orders.models import IN_FLIGHT_STATES, ProcessState, StateRecord, format_utc
from orders.stores._records import keep_record, require_etag, stamp
from orders.stores._sqlite import SqliteAdapter
from orders.stores._sqlite_state_table import (
    ADDED_COLUMNS,
    BY_STATE_SQL,
    CHANGES_SQL,
    COLUMNS,
    EXPIRED_SQL,
    NO_DEADLINE,
    RECENT_SQL,
    SCHEMA,
    STARTABLE_OF_CLIENT_SQL,
    STARTABLE_SQL,
    count_in_sql,
    count_of_client_sql,
    decode_token,
    encode_token,
    from_row,
    to_row,
)
from orders.stores._state_scans import StateScans
from orders.stores.errors import NotFoundError, PreconditionFailedError
from orders.stores.ports import (
    AnyClient,
    Created,
    ScanPage,
    StateChange,
    check_claim,
    check_count,
    check_states,
)
from sqlitekit import write

PROCESSING_COUNT_SQL = "SELECT COUNT(*) FROM state_records WHERE process_state = 'Processing'"
"""Served by ``ix_state_deadline``: reads the Processing entries only; in a claim's UPDATE."""


class SqliteStateStore(SqliteAdapter, StateScans):
    """State store in a SQLite file (S2, S3, V1, V2, X4); ``clock`` stamps ``updated_at``."""

    STORE = "state"

    def __init__(
        self, path: str | Path, *, clock: Clock | None = None, synchronous: str = "FULL"
    ) -> None:
        self._clock = clock or SystemClock()
        super().__init__(path, synchronous=synchronous)

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute(SCHEMA[0])
        present = {row["name"] for row in conn.execute("PRAGMA table_info(state_records)")}
        for column, definition in ADDED_COLUMNS.items():
            if column not in present:
                conn.execute(f"ALTER TABLE state_records ADD COLUMN {column} {definition}")
        for statement in SCHEMA[1:]:
            conn.execute(statement)

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """See :meth:`orders.stores.ports.StateStore.create_if_absent`."""
        stored = stamp(record, etag=str(uuid.uuid4()), now=self._clock.now())
        row = to_row(stored)
        created, existing = self._db.transact(partial(_insert_record, row, record.order_key),
                                               "write", one_statement=True)
        if created:
            return Created(stored, created=True)
        self._db.count("point_read")
        assert existing is not None, "a conflicting insert means the record exists"
        return keep_record(existing, record)

    def get(self, order_key: str) -> StateRecord | None:
        """Return the record with its ETag, or None."""
        with self._db.use("point_read") as conn:
            row = conn.execute(
                "SELECT * FROM state_records WHERE order_id = ?", (order_key,)
            ).fetchone()
        return None if row is None else from_row(row)

    def replace(self, record: StateRecord) -> StateRecord:
        """See :meth:`orders.stores.ports.StateStore.replace` (a conditional UPDATE)."""
        stored = self._write_if_current(record, None)
        assert stored is not None  # without a limit there is always room
        return stored

    def claim_within(self, record: StateRecord, limit: int) -> StateRecord | None:
        """See the port; the count of Processing records is part of the one UPDATE."""
        return self._write_if_current(record, check_claim(record, limit))

    def _write_if_current(self, record: StateRecord, limit: int | None) -> StateRecord | None:
        """Run the conditional UPDATE; None if ``limit`` others are Processing."""
        expected = require_etag(record)
        stored = stamp(record, etag=str(uuid.uuid4()), now=self._clock.now())
        row = to_row(stored)
        row["expected_etag"] = expected
        row["limit"] = limit
        outcome = self._db.transact(partial(_update_if_current, row, limit), "write",
                                    one_statement=True)
        if outcome == "written":
            return stored
        if outcome == "full":
            return None
        if outcome == "missing":
            raise NotFoundError(f"orderId {record.order_key!r}: no state record to replace")
        raise PreconditionFailedError(
            f"orderId {record.order_key!r}: ETag {expected!r} is stale; another writer "
            "changed the record (re-read it)"
        )

    def _startable(self, now: datetime, limit: int, state: ProcessState,
                   client_id: str | None | AnyClient) -> list[StateRecord]:
        # Ordered by NotBefore (records without a hold first); served by ix_state_startable,
        # or for one client by ix_state_client.
        with self._db.use("query") as conn:
            if isinstance(client_id, AnyClient):
                rows = conn.execute(STARTABLE_SQL, (state.value, format_utc(now), limit))
            else:
                rows = conn.execute(STARTABLE_OF_CLIENT_SQL,
                                    (client_id, state.value, format_utc(now), limit))
            return [from_row(row) for row in rows.fetchall()]

    def _count_of_client(self, client_id: str, states: tuple[ProcessState, ...],
                         limit: int) -> int:
        # One bounded SUM on ix_state_client: reads at most ``limit`` records.
        with self._db.use("query") as conn:
            found: int = conn.execute(count_of_client_sql(len(states)),
                                      (client_id, *(s.value for s in states), limit)).fetchone()[0]
        return min(found, limit)

    def _count_in(self, states: tuple[ProcessState, ...]) -> int:
        with self._db.use("query") as conn:
            found: int = conn.execute(count_in_sql(len(states)),
                                      [s.value for s in states]).fetchone()[0]
        return found

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """See :meth:`orders.stores.ports.StateStore.find_by_state`; in OrderID order."""
        (state,) = check_states([state])
        check_count("page_size", page_size)
        after = ""
        if continuation:
            _, _, after = decode_token(continuation, (state,))
        with self._db.use("query") as conn:
            rows = conn.execute(BY_STATE_SQL, (state.value, after, page_size)).fetchall()
        token = None
        if len(rows) == page_size:
            token = encode_token(state, "", rows[-1]["order_id"])
        return ScanPage(records=tuple(from_row(row) for row in rows), continuation=token,
                        rows_read=len(rows))

    def _recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        # One range of ix_state_recent read backwards: ``limit`` index entries at most.
        with self._db.use() as conn:
            rows = conn.execute(RECENT_SQL, (state.value, limit)).fetchall()
        return [from_row(row) for row in rows]

    def _changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        # One range of the covering ix_state_recent per state (no table read), merged.
        found: list[StateChange] = []
        with self._db.use() as conn:
            for state in ProcessState:
                found.extend(
                    StateChange(state, datetime.fromisoformat(row["created_at"]),
                                datetime.fromisoformat(row["updated_at"]))
                    for row in conn.execute(CHANGES_SQL, (state.value, format_utc(since), limit)))
        found.sort(key=lambda change: change.updated_at, reverse=True)
        return found[:limit]

    def _scan_deadlines(self, low: datetime | None, high: datetime, page_size: int,
                        continuation: str | None,
                        states: tuple[ProcessState, ...]) -> ScanPage:
        """Read index ranges of ``ix_state_deadline``, one per state.

        ``rows_read`` equals the rows returned: the scan never reads the table.
        """
        check_count("page_size", page_size)
        states = check_states(states)
        start, after_c, after_o = (
            decode_token(continuation, states) if continuation else (0, "", "")
        )
        bounds = (NO_DEADLINE if low is None else format_utc(low), format_utc(high))
        found: list[tuple[ProcessState, Any]] = []
        with self._db.use() as conn:
            for index in range(start, len(states)):
                key = (after_c, after_o) if index == start else ("", "")
                self._db.count("query")
                rows = conn.execute(
                    EXPIRED_SQL,
                    (states[index].value, *bounds, *key, page_size - len(found)),
                ).fetchall()
                found.extend((states[index], row) for row in rows)
                if len(found) == page_size:
                    break
        token = None
        if len(found) == page_size:
            last_state, last = found[-1]
            token = encode_token(last_state, last["complete_by"], last["order_id"])
        return ScanPage(
            records=tuple(from_row(row) for _, row in found),
            continuation=token,
            rows_read=len(found),
        )

    def save_snapshot(self, name: str, body: dict[str, Any]) -> None:
        """See :meth:`orders.stores.ports.StateStore.save_snapshot`."""
        text = json.dumps(body, allow_nan=False)
        with self._db.use("write") as conn, write(conn):
            conn.execute("INSERT OR REPLACE INTO snapshots (name, body) VALUES (?, ?)",
                         (name, text))

    def load_snapshot(self, name: str) -> dict[str, Any] | None:
        """See :meth:`orders.stores.ports.StateStore.load_snapshot`."""
        with self._db.use("read") as conn:
            row = conn.execute("SELECT body FROM snapshots WHERE name = ?", (name,)).fetchone()
        return None if row is None else dict(json.loads(row["body"]))

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """See :meth:`orders.stores.ports.StateStore.count_by_state`; one COUNT(*) per state."""
        wanted = check_states(states)
        self._db.count("query", len(wanted))
        with self._db.use() as conn:
            return {
                state: conn.execute(
                    "SELECT COUNT(*) FROM state_records WHERE process_state = ?", (state.value,)
                ).fetchone()[0]
                for state in wanted
            }

    def query_plans(self) -> dict[str, list[str]]:
        """Return SQLite's EXPLAIN QUERY PLAN lines per query.

        Keys ``startable``, ``expired``, ``overdue``, ``recent``, ``changes``, ``count_of_client``,
        ``count_in``; a ``SEARCH ... USING INDEX`` line shows the query reads an index range.
        """
        in_flight = tuple(s.value for s in IN_FLIGHT_STATES)
        with self._db.use() as conn:
            return {
                name: [
                    row["detail"]
                    for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args).fetchall()
                ]
                for name, sql, args in (
                    ("startable", STARTABLE_SQL, ("Pending", "", 1)),
                    ("expired", EXPIRED_SQL, ("Processing", "", "", "", "", 1)),
                    ("overdue", EXPIRED_SQL, ("Processing", NO_DEADLINE, "", "", "", 1)),
                    ("recent", RECENT_SQL, ("Compensated", 1)),
                    ("changes", CHANGES_SQL, ("Processed", "", 1)),
                    ("count_of_client", count_of_client_sql(3), ("acme", *in_flight, 1)),
                    ("count_in", count_in_sql(3), in_flight),
                )
            }


_UPDATED = [c for c in COLUMNS if c not in ("order_id", "created_at")]
_UPDATE_SQL = (f"UPDATE state_records SET {', '.join(f'{c} = :{c}' for c in _UPDATED)} "
               "WHERE order_id = :order_id AND etag = :expected_etag")
_CLAIM_SQL = (f"{_UPDATE_SQL} AND (process_state = 'Processing' "
              f"OR ({PROCESSING_COUNT_SQL}) < :limit)")
"""A claim: written only if the record is Processing already or fewer than ``limit`` are."""
_INSERT_SQL = (f"INSERT INTO state_records ({', '.join(COLUMNS)}) "
               f"VALUES ({', '.join(':' + c for c in COLUMNS)}) ON CONFLICT (order_id) DO NOTHING")


def _insert_record(row: dict[str, Any], order_key: str,
                   conn: sqlite3.Connection) -> tuple[bool, StateRecord | None]:
    """Insert the record unless its order has one: (True, None), else (False, the stored one).

    One writing statement; the read follows only an insert that changed nothing.
    """
    if conn.execute(_INSERT_SQL, row).rowcount == 1:
        return True, None
    found = conn.execute("SELECT * FROM state_records WHERE order_id = ?", (order_key,))
    return False, from_row(found.fetchone())


def _update_if_current(row: dict[str, Any], limit: int | None,
                       conn: sqlite3.Connection) -> str:
    """Replace the record if its ETag is current: "written", "full", "stale" or "missing".

    One conditional UPDATE; only when it changed nothing is the record read, to say why.
    Outside a transaction that read comes later than the UPDATE, and still answers for it:
    a failed write changed nothing, and an ETag, a new UUID per write, never comes back, so
    a record found with the expected ETag was unchanged since (the claim found no room).
    """
    if conn.execute(_UPDATE_SQL if limit is None else _CLAIM_SQL, row).rowcount == 1:
        return "written"
    found = conn.execute("SELECT etag FROM state_records WHERE order_id = ?",
                         (row["order_id"],)).fetchone()
    if found is None:
        return "missing"
    if found["etag"] != row["expected_etag"] or limit is None:
        return "stale"
    return "full"
