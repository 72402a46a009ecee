"""The state store's SQLite table: schema, rows, queries and continuation tokens."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from orders.models import ProcessState, StateRecord

NO_HOLD = ""
NO_DEADLINE = ""
"""Lower bound of the overdue range: sorts before every CompleteBy (NULL never matches)."""
COLUMNS = (
    "order_id", "process_state", "locked_by", "complete_by", "not_before", "failure_count",
    "attempt", "compensation_attempt", "compensation_failures", "failure_reason",
    "circuit_refused_by", "circuit_holds", "reply_to", "workflow_version", "schema_version",
    "etag", "created_at", "updated_at", "client_id", "client_order_id", "trace_parent",
    "attempt_trace", "work",
)
SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS state_records (
        order_id         TEXT PRIMARY KEY,        -- order key: <clientId>~<OrderID> or
                                                  -- a legacy plain OrderID
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
        updated_at       TEXT NOT NULL,
        client_id        TEXT,                    -- NULL: a legacy record
        client_order_id  TEXT,                    -- the client's OrderID (NULL: legacy)
        trace_parent     TEXT,                    -- W3C traceparent of the submission
        attempt_trace    TEXT,                    -- traceparent of the last attempt
        work             INTEGER NOT NULL DEFAULT 1 -- admission weight (X3)
    )
    """,
    "CREATE INDEX IF NOT EXISTS ix_state_startable "
    "ON state_records (process_state, not_before) WHERE locked_by IS NULL",
    "CREATE INDEX IF NOT EXISTS ix_state_deadline "
    "ON state_records (process_state, complete_by, order_id)",
    "CREATE INDEX IF NOT EXISTS ix_state_by_state ON state_records (process_state, order_id)",
    # The per-client quota's count and the starter's per-client claims (X3, S8).
    # work last: the quota's SUM reads the index alone (an older file keeps its index
    # without it, and reads each counted row too).
    "CREATE INDEX IF NOT EXISTS ix_state_client "
    "ON state_records (client_id, process_state, not_before, work)",
    # The dashboard's newest-first lists and charts (S7, X8); covers the charts' reads.
    "CREATE INDEX IF NOT EXISTS ix_state_recent "
    "ON state_records (process_state, updated_at, created_at)",
    "CREATE TABLE IF NOT EXISTS snapshots (name TEXT PRIMARY KEY, body TEXT NOT NULL)",
)
ADDED_COLUMNS = {
    "compensation_attempt": "INTEGER NOT NULL DEFAULT 0",
    "compensation_failures": "INTEGER NOT NULL DEFAULT 0",
    "failure_reason": "TEXT",
    "circuit_refused_by": "TEXT",
    "circuit_holds": "INTEGER NOT NULL DEFAULT 0",
    "client_id": "TEXT",
    "client_order_id": "TEXT",
    "trace_parent": "TEXT",
    "attempt_trace": "TEXT",
    "work": "INTEGER NOT NULL DEFAULT 1",
}
"""Columns state schema versions 2 to 5 added, for ``ADD COLUMN`` (NULL in older records)."""
STARTABLE_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND locked_by IS NULL "
    "AND not_before <= ? ORDER BY not_before LIMIT ?"
)
STARTABLE_OF_CLIENT_SQL = (
    "SELECT * FROM state_records WHERE client_id IS ? AND process_state = ? "
    "AND locked_by IS NULL AND not_before <= ? ORDER BY not_before LIMIT ?"
)


def count_of_client_sql(states: int) -> str:
    """One bounded SUM of the work of a client's records in ``states`` states.

    Reads at most ``limit`` records (each of work 1 or more), on ix_state_client.
    Parameters: the client id, the ``states`` state names, the limit.
    """
    return ("SELECT COALESCE(SUM(work), 0) FROM (SELECT work FROM state_records "
            f"WHERE client_id = ? AND process_state IN ({', '.join('?' * states)}) LIMIT ?)")


def count_in_sql(states: int) -> str:
    """One COUNT of the records in ``states`` states, on the process_state index."""
    return ("SELECT COUNT(*) FROM state_records "
            f"WHERE process_state IN ({', '.join('?' * states)})")


EXPIRED_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND complete_by >= ? "
    "AND complete_by < ? AND (complete_by, order_id) > (?, ?) "
    "ORDER BY complete_by, order_id LIMIT ?"
)
RECENT_SQL = (
    "SELECT * FROM state_records INDEXED BY ix_state_recent WHERE process_state = ? "
    "ORDER BY updated_at DESC LIMIT ?"
)
CHANGES_SQL = (
    "SELECT process_state, created_at, updated_at FROM state_records "
    "INDEXED BY ix_state_recent WHERE process_state = ? AND updated_at >= ? "
    "ORDER BY updated_at DESC LIMIT ?"
)
BY_STATE_SQL = (
    "SELECT * FROM state_records WHERE process_state = ? AND order_id > ? "
    "ORDER BY order_id LIMIT ?"
)


def to_row(record: StateRecord) -> dict[str, Any]:
    row = record.model_dump(mode="json", by_alias=False)
    row["order_id"] = row.pop("order_key")  # the column keeps its stored name
    row["not_before"] = row["not_before"] or NO_HOLD
    return row


def from_row(row: Any) -> StateRecord:
    data = dict(row)
    data["order_key"] = data.pop("order_id")
    data["not_before"] = data["not_before"] or None
    return StateRecord.model_validate(data)


def encode_token(state: ProcessState, complete_by: str, order_key: str) -> str:
    raw = json.dumps({"s": state.value, "c": complete_by, "o": order_key}).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_token(token: str, states: tuple[ProcessState, ...]) -> tuple[int, str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
        index = states.index(ProcessState(data["s"]))
        return index, str(data["c"]), str(data["o"])
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeError) as exc:
        raise ValueError(
            "continuation: not a token this store issued for the same states"
        ) from exc
