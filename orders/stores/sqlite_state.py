"""Embedded state store: state records in a SQLite file, with the indexes the scans need.

Implements :class:`orders.stores.ports.StateStore`. The ETag is a new UUID per write;
conditional writes are ``UPDATE ... WHERE etag = ?`` inside ``BEGIN IMMEDIATE``, so
concurrent starters and supervisors in any number of processes serialise on the file.

Two partial/compound indexes make both scans read only the rows they return:

* ``ix_state_startable (process_state, not_before) WHERE locked_by IS NULL`` for the
  starter. A record with no hold stores ``not_before = ''`` (sorts before every time)
  instead of NULL, so the query is one index range ``not_before <= now`` without an OR.
* ``ix_state_deadline (process_state, complete_by, order_id)`` for the supervisor, which
  pages by key (keyset pagination): the continuation token is the last key returned. Its
  two scans are two ranges of it: expired within the window
  (``now - window <= complete_by < now``) and overdue (``'' <= complete_by < now - window``;
  ``''`` sorts before every time and NULL matches neither).

A third, ``ix_state_by_state (process_state, order_id)``, lets operators page through one
state (every CompensationFailed record, say) the same way.

Files written by older state schema versions lack the columns later versions added
(version 2: the compensation columns; version 3: ``circuit_refused_by``,
``circuit_holds``); opening one adds them (``ALTER TABLE ... ADD COLUMN`` with the older
version's meaning as default, SPEC X6).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from clocks import Clock, SystemClock
from orders.models import SUPERVISED_STATES, ProcessState, StateRecord, format_utc
from orders.stores._records import require_etag, stamp
from orders.stores._sqlite import Database
from orders.stores.errors import ConflictError, NotFoundError, PreconditionFailedError
from orders.stores.ports import (
    Created,
    ScanPage,
    check_count,
    check_now,
    check_startable,
    check_states,
    check_window,
)
from sqlitekit import write

_NO_HOLD = ""
_NO_DEADLINE = ""
"""Lower bound of the overdue range: sorts before every CompleteBy (NULL never matches)."""
_COLUMNS = (
    "order_id", "process_state", "locked_by", "complete_by", "not_before", "failure_count",
    "attempt", "compensation_attempt", "compensation_failures", "failure_reason",
    "circuit_refused_by", "circuit_holds", "reply_to", "workflow_version", "schema_version",
    "etag", "created_at", "updated_at",
)
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS state_records (
        order_id         TEXT PRIMARY KEY,        -- OrderID
        process_state    TEXT NOT NULL,
        locked_by        TEXT,                    -- orchestration instance id or NULL
        complete_by      TEXT,                    -- CompleteBy, fixed-width UTC text
        not_before       TEXT NOT NULL DEFAULT '',-- '' = no hold (see module docstring)
        failure_count    INTEGER NOT NULL,
        attempt          INTEGER NOT NULL,
        compensation_attempt  INTEGER NOT NULL DEFAULT 0,
        compensation_failures INTEGER NOT NULL DEFAULT 0,
        failure_reason   TEXT,
        circuit_refused_by TEXT,                  -- instance id an open circuit refused
        circuit_holds    INTEGER NOT NULL DEFAULT 0,
        reply_to         TEXT NOT NULL,
        workflow_version INTEGER NOT NULL,
        schema_version   INTEGER NOT NULL,
        etag             TEXT NOT NULL,           -- new UUID on every write
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS ix_state_startable "
    "ON state_records (process_state, not_before) WHERE locked_by IS NULL",
    "CREATE INDEX IF NOT EXISTS ix_state_deadline "
    "ON state_records (process_state, complete_by, order_id)",
    "CREATE INDEX IF NOT EXISTS ix_state_by_state ON state_records (process_state, order_id)",
)
_ADDED_COLUMNS = {
    "compensation_attempt": "INTEGER NOT NULL DEFAULT 0",
    "compensation_failures": "INTEGER NOT NULL DEFAULT 0",
    "failure_reason": "TEXT",
    "circuit_refused_by": "TEXT",
    "circuit_holds": "INTEGER NOT NULL DEFAULT 0",
}
"""Columns state schema versions 2 and 3 added, with their definitions for ``ADD COLUMN``."""
_STARTABLE_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND locked_by IS NULL "
    "AND not_before <= ? ORDER BY not_before LIMIT ?"
)
_EXPIRED_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND complete_by >= ? "
    "AND complete_by < ? AND (complete_by, order_id) > (?, ?) "
    "ORDER BY complete_by, order_id LIMIT ?"
)
_BY_STATE_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND order_id > ? "
    "ORDER BY order_id LIMIT ?"
)


def _to_row(record: StateRecord) -> dict[str, Any]:
    row = record.model_dump(mode="json", by_alias=False)
    row["not_before"] = row["not_before"] or _NO_HOLD
    return row


def _from_row(row: Any) -> StateRecord:
    data = dict(row)
    data["not_before"] = data["not_before"] or None
    return StateRecord.model_validate(data)


def _encode_token(state: ProcessState, complete_by: str, order_id: str) -> str:
    raw = json.dumps({"s": state.value, "c": complete_by, "o": order_id}).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def _decode_token(token: str, states: tuple[ProcessState, ...]) -> tuple[int, str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
        index = states.index(ProcessState(data["s"]))
        return index, str(data["c"]), str(data["o"])
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeError) as exc:
        raise ValueError(
            "continuation: not a token this store issued for the same states"
        ) from exc


class SqliteStateStore:
    """State store in a SQLite file (SPEC S2, S3, V1, V2, X4).

    Parameters
    ----------
    path : str or Path
        Database file, separate from the task hub so it outlives and can be recovered
        independently of the workers (SPEC X4).
    clock : Clock, optional
        Time source for ``updated_at``; :class:`clocks.SystemClock` by default.
    synchronous : {"FULL", "NORMAL"}
        See :func:`sqlitekit.connect`.
    """

    def __init__(
        self, path: str | Path, *, clock: Clock | None = None, synchronous: str = "FULL"
    ) -> None:
        self._db = Database(path, synchronous=synchronous)
        self._clock = clock or SystemClock()
        with self._db.use() as conn, write(conn):
            conn.execute(_SCHEMA[0])
            present = {row["name"] for row in conn.execute("PRAGMA table_info(state_records)")}
            for column, definition in _ADDED_COLUMNS.items():
                if column not in present:
                    conn.execute(f"ALTER TABLE state_records ADD COLUMN {column} {definition}")
            for statement in _SCHEMA[1:]:
                conn.execute(statement)

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """Store ``record`` unless its OrderID exists (SPEC S1, X5); see the port.

        Raises
        ------
        ConflictError
            If another submission's record is stored under the same OrderID.
        pydantic.ValidationError
            If ``record`` breaks a :class:`StateRecord` rule.
        """
        stored = stamp(record, etag=str(uuid.uuid4()), now=self._clock.now())
        row = _to_row(stored)
        with self._db.use() as conn:
            with write(conn):
                cursor = conn.execute(
                    f"INSERT INTO state_records ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join(':' + c for c in _COLUMNS)}) "
                    "ON CONFLICT (order_id) DO NOTHING",
                    row,
                )
                if cursor.rowcount == 1:
                    return Created(stored, created=True)
                existing = _from_row(
                    conn.execute(
                        "SELECT * FROM state_records WHERE order_id = ?", (record.order_id,)
                    ).fetchone()
                )
        if not existing.same_submission(record):
            raise ConflictError(
                f"orderId {record.order_id!r}: a state record of another submission "
                f"(replyTo {existing.reply_to!r}) already exists; nothing was overwritten "
                "(SPEC S1)"
            )
        return Created(existing, created=False)

    def get(self, order_id: str) -> StateRecord | None:
        """Return the record with its ETag, or None."""
        with self._db.use() as conn:
            row = conn.execute(
                "SELECT * FROM state_records WHERE order_id = ?", (order_id,)
            ).fetchone()
        return None if row is None else _from_row(row)

    def replace(self, record: StateRecord) -> StateRecord:
        """Write ``record`` if the stored ETag equals ``record.etag``; see the port.

        Raises
        ------
        ValueError
            If ``record.etag`` is None.
        PreconditionFailedError
            If the stored ETag differs (another writer won; its version is kept).
        NotFoundError
            If no record has this OrderID.
        """
        expected = require_etag(record)
        stored = stamp(record, etag=str(uuid.uuid4()), now=self._clock.now())
        row = _to_row(stored)
        row["expected_etag"] = expected
        updated = [c for c in _COLUMNS if c not in ("order_id", "created_at")]
        with self._db.use() as conn:
            with write(conn):
                cursor = conn.execute(
                    f"UPDATE state_records SET {', '.join(f'{c} = :{c}' for c in updated)} "
                    "WHERE order_id = :order_id AND etag = :expected_etag",
                    row,
                )
                if cursor.rowcount == 1:
                    return stored
                exists = conn.execute(
                    "SELECT 1 FROM state_records WHERE order_id = ?", (record.order_id,)
                ).fetchone()
        if exists is None:
            raise NotFoundError(f"orderId {record.order_id!r}: no state record to replace")
        raise PreconditionFailedError(
            f"orderId {record.order_id!r}: ETag {expected!r} is stale; another writer "
            "changed the record (re-read it)"
        )

    def find_startable(
        self, now: datetime, limit: int, state: ProcessState = ProcessState.PENDING
    ) -> list[StateRecord]:
        """Return up to ``limit`` unlocked records in ``state`` whose NotBefore has come (S3).

        Ordered by NotBefore (records without a hold first); served by
        ``ix_state_startable``.

        Raises
        ------
        ValueError
            If ``now`` is naive, ``limit`` is outside 1..1000 or ``state`` is neither
            Pending nor Compensating.
        """
        check_now(now)
        check_count("limit", limit)
        check_startable(state)
        with self._db.use() as conn:
            rows = conn.execute(_STARTABLE_SQL, (state.value, format_utc(now), limit)).fetchall()
        return [_from_row(row) for row in rows]

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """Return one page of the records in ``state``, in OrderID order (see the port).

        Keyset pagination on ``ix_state_by_state``: the token is the last OrderID returned.

        Raises
        ------
        ValueError
            If ``state`` is not a ProcessState, ``page_size`` is outside 1..1000, or the
            token was not issued for this state.
        """
        (state,) = check_states([state])
        check_count("page_size", page_size)
        after = ""
        if continuation:
            _, _, after = _decode_token(continuation, (state,))
        with self._db.use() as conn:
            rows = conn.execute(_BY_STATE_SQL, (state.value, after, page_size)).fetchall()
        token = None
        if len(rows) == page_size:
            token = _encode_token(state, "", rows[-1]["order_id"])
        return ScanPage(records=tuple(_from_row(row) for row in rows), continuation=token,
                        rows_read=len(rows))

    def scan_expired(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records with ``now - window <= CompleteBy < now`` (SPEC V1).

        Each state is one index range of ``ix_state_deadline``, read in key order from the
        token's position, so ``rows_read`` equals the rows returned: the scan touches the
        expired records, never the table.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window``, ``page_size`` outside
            1..1000, or a token not issued for these ``states``.
        """
        check_now(now)
        check_window(window)
        return self._scan_range(format_utc(now - window), format_utc(now), page_size,
                                continuation, states)

    def scan_overdue(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records with ``CompleteBy < now - window`` (SPEC V1).

        The index range of ``ix_state_deadline`` below the window, oldest CompleteBy
        first; like :meth:`scan_expired`, ``rows_read`` equals the rows returned.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window``, ``page_size`` outside
            1..1000, or a token not issued for these ``states``.
        """
        check_now(now)
        check_window(window)
        return self._scan_range(_NO_DEADLINE, format_utc(now - window), page_size,
                                continuation, states)

    def _scan_range(self, low: str, high: str, page_size: int, continuation: str | None,
                    states: tuple[ProcessState, ...]) -> ScanPage:
        check_count("page_size", page_size)
        states = check_states(states)
        start, after_c, after_o = (
            _decode_token(continuation, states) if continuation else (0, "", "")
        )
        found: list[tuple[ProcessState, Any]] = []
        with self._db.use() as conn:
            for index in range(start, len(states)):
                key = (after_c, after_o) if index == start else ("", "")
                rows = conn.execute(
                    _EXPIRED_SQL,
                    (states[index].value, low, high, *key, page_size - len(found)),
                ).fetchall()
                found.extend((states[index], row) for row in rows)
                if len(found) == page_size:
                    break
        token = None
        if len(found) == page_size:
            last_state, last = found[-1]
            token = _encode_token(last_state, last["complete_by"], last["order_id"])
        return ScanPage(
            records=tuple(_from_row(row) for _, row in found),
            continuation=token,
            rows_read=len(found),
        )

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """Count records per ProcessState; all states if ``states`` is None (SPEC X3).

        One ``COUNT(*)`` per state on the covering index ``ix_state_deadline``, so asking
        only for in-flight states does not read the ever-growing Processed rows.
        """
        wanted = check_states(states)
        with self._db.use() as conn:
            return {
                state: conn.execute(
                    "SELECT COUNT(*) FROM state_records WHERE process_state = ?", (state.value,)
                ).fetchone()[0]
                for state in wanted
            }

    def query_plans(self) -> dict[str, list[str]]:
        """Return SQLite's EXPLAIN QUERY PLAN for the starter and supervisor queries.

        Returns
        -------
        dict of str to list of str
            ``{"startable": [...], "expired": [...], "overdue": [...]}``, one line per
            plan step (the overdue scan is the expired query below the window); a
            ``SEARCH ... USING INDEX`` line shows the query reads an index range.
        """
        with self._db.use() as conn:
            return {
                name: [
                    row["detail"]
                    for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args).fetchall()
                ]
                for name, sql, args in (
                    ("startable", _STARTABLE_SQL, ("Pending", "", 1)),
                    ("expired", _EXPIRED_SQL, ("Processing", "", "", "", "", 1)),
                    ("overdue", _EXPIRED_SQL, ("Processing", _NO_DEADLINE, "", "", "", 1)),
                )
            }

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
