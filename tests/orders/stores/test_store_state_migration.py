"""State store files of older state schema versions open and read as the current one (X6)."""

import sqlite3

from orders.models import STATE_SCHEMA_VERSION, ProcessState
from orders.stores.sqlite_state import SqliteStateStore

V1_TABLE = """
CREATE TABLE state_records (
    order_id TEXT PRIMARY KEY, process_state TEXT NOT NULL, locked_by TEXT,
    complete_by TEXT, not_before TEXT NOT NULL DEFAULT '', failure_count INTEGER NOT NULL,
    attempt INTEGER NOT NULL, reply_to TEXT NOT NULL, workflow_version INTEGER NOT NULL,
    schema_version INTEGER NOT NULL, etag TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL)
"""


def open_old_file(path, table: str, insert: str, clock) -> SqliteStateStore:
    """Write a state store file with ``table`` and one ``insert``ed row, then open it."""
    with sqlite3.connect(path) as conn:
        conn.execute(table)
        conn.execute(insert)
    conn.close()
    return SqliteStateStore(path, clock=clock)


def test_version_1_file_gains_the_compensation_columns_and_reads_as_version_2(tmp_path, clock):
    path = tmp_path / "state.sqlite"
    store = open_old_file(
        path, V1_TABLE,
        "INSERT INTO state_records VALUES ('ORD-1', 'Processing', 'ORD-1:2', "
        "'2030-01-01T00:00:30.000000Z', '', 1, 2, 'replies-acme', 1, 1, 'etag-1', "
        "'2030-01-01T00:00:00.000000Z', '2030-01-01T00:00:00.000000Z')", clock)
    try:
        record = store.get("ORD-1")
        assert record.schema_version == STATE_SCHEMA_VERSION and record.failure_count == 1
        assert (record.compensation_attempt, record.compensation_failures,
                record.failure_reason) == (0, 0, None)
        assert (record.circuit_refused_by, record.circuit_holds) == (None, 0)
        handed = store.replace(record.model_copy(update={
            "process_state": ProcessState.COMPENSATING, "locked_by": None,
            "failure_reason": "gave up"}))
        assert store.get("ORD-1") == handed
        assert store.find_startable(clock.now(), 5, ProcessState.COMPENSATING) == [handed]
    finally:
        store.close()
    reopened = SqliteStateStore(path, clock=clock)  # the migration runs once
    try:
        assert reopened.get("ORD-1") == handed
    finally:
        reopened.close()


V2_TABLE = V1_TABLE.replace(
    "attempt INTEGER NOT NULL,",
    "attempt INTEGER NOT NULL, compensation_attempt INTEGER NOT NULL DEFAULT 0, "
    "compensation_failures INTEGER NOT NULL DEFAULT 0, failure_reason TEXT,")


def test_version_2_file_gains_the_circuit_columns(tmp_path, clock):
    path = tmp_path / "state.sqlite"
    store = open_old_file(
        path, V2_TABLE,
        "INSERT INTO state_records (order_id, process_state, locked_by, complete_by, "
        "not_before, failure_count, attempt, compensation_attempt, compensation_failures, "
        "failure_reason, reply_to, workflow_version, schema_version, etag, created_at, "
        "updated_at) VALUES ('ORD-1', 'Processing', 'ORD-1:2', "
        "'2030-01-01T00:00:30.000000Z', '', 1, 2, 0, 0, NULL, 'replies-acme', 1, 2, "
        "'etag-1', '2030-01-01T00:00:00.000000Z', '2030-01-01T00:00:00.000000Z')", clock)
    try:
        record = store.get("ORD-1")
        assert record.schema_version == STATE_SCHEMA_VERSION
        assert (record.circuit_refused_by, record.circuit_holds) == (None, 0)
        marked = store.replace(record.model_copy(update={
            "circuit_refused_by": "ORD-1:2", "circuit_holds": 2}))
        assert store.get("ORD-1") == marked
        assert (marked.circuit_refused_by, marked.circuit_holds) == ("ORD-1:2", 2)
    finally:
        store.close()


V3_TABLE = V2_TABLE.replace(
    "failure_reason TEXT,",
    "failure_reason TEXT, circuit_refused_by TEXT, circuit_holds INTEGER NOT NULL DEFAULT 0,")


def test_version_3_file_gains_the_client_columns_and_keeps_its_legacy_keys(tmp_path, clock):
    path = tmp_path / "state.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(V3_TABLE)
        conn.execute(
            "INSERT INTO state_records (order_id, process_state, locked_by, complete_by, "
            "not_before, failure_count, attempt, reply_to, workflow_version, schema_version, "
            "etag, created_at, updated_at) VALUES ('ORD-1', 'Processing', 'ORD-1:2', "
            "'2030-01-01T00:00:30.000000Z', '', 1, 2, 'replies-acme', 1, 3, 'etag-1', "
            "'2030-01-01T00:00:00.000000Z', '2030-01-01T00:00:00.000000Z')")
    conn.close()
    store = SqliteStateStore(path, clock=clock)
    try:
        legacy = store.get("ORD-1")
        assert legacy.schema_version == STATE_SCHEMA_VERSION
        assert (legacy.client_id, legacy.client_order_id, legacy.locked_by) == \
            (None, None, "ORD-1:2")
        assert legacy.submitted_order_id == "ORD-1"
        store.replace(legacy.model_copy(update={"failure_count": 2}))
        assert store.get("ORD-1").failure_count == 2
        keyed = store.create_if_absent(legacy.model_copy(update={
            "order_key": "acme~ORD-1", "client_id": "acme", "client_order_id": "ORD-1",
            "process_state": ProcessState.PENDING, "locked_by": None, "etag": None})).record
        assert store.get("acme~ORD-1") == keyed and store.get("ORD-1").order_key == "ORD-1"
    finally:
        store.close()
