"""A state store file written by state schema version 1 opens and reads as version 2 (X6)."""

import sqlite3

from orders.models import ProcessState
from orders.stores.sqlite_state import SqliteStateStore

V1_TABLE = """
CREATE TABLE state_records (
    order_id TEXT PRIMARY KEY, process_state TEXT NOT NULL, locked_by TEXT,
    complete_by TEXT, not_before TEXT NOT NULL DEFAULT '', failure_count INTEGER NOT NULL,
    attempt INTEGER NOT NULL, reply_to TEXT NOT NULL, workflow_version INTEGER NOT NULL,
    schema_version INTEGER NOT NULL, etag TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL)
"""


def test_version_1_file_gains_the_compensation_columns_and_reads_as_version_2(tmp_path, clock):
    path = tmp_path / "state.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(V1_TABLE)
        conn.execute(
            "INSERT INTO state_records VALUES ('ORD-1', 'Processing', 'ORD-1:2', "
            "'2030-01-01T00:00:30.000000Z', '', 1, 2, 'replies-acme', 1, 1, 'etag-1', "
            "'2030-01-01T00:00:00.000000Z', '2030-01-01T00:00:00.000000Z')")
    conn.close()
    store = SqliteStateStore(path, clock=clock)
    try:
        record = store.get("ORD-1")
        assert record.schema_version == 2 and record.failure_count == 1
        assert (record.compensation_attempt, record.compensation_failures,
                record.failure_reason) == (0, 0, None)
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
