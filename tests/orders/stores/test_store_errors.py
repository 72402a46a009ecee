"""How each store backend's failures map to the store errors: by code, never by text.

SQLite errors are told by ``sqlite_errorcode``. Each case asserts the class,
``retryable`` and ``retry_after`` a caller acts on.
"""

import sqlite3

import pytest
from store_builders import make_record

from clocks import ManualClock
from orders.stores import StoreError, TransientStoreError
from orders.stores._sqlite import Database
from orders.stores.sqlite_state import SqliteStateStore


# ----------------------------------------------------------------------------- SQLite
def test_sqlite_busy_is_a_retryable_transient_store_error(tmp_path):
    clock = ManualClock()
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=clock)
    other = sqlite3.connect(tmp_path / "state.sqlite", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        store._db.conn.execute("PRAGMA busy_timeout=0")  # give up at once, not after 30 s
        with pytest.raises(TransientStoreError) as info:
            store.create_if_absent(make_record("ORD-BUSY", clock.now()))
    finally:
        other.execute("ROLLBACK")
        other.close()
    error = info.value
    assert isinstance(error.__cause__, sqlite3.OperationalError)
    assert error.__cause__.sqlite_errorname == "SQLITE_BUSY"
    assert error.retryable is True
    assert error.retry_after is None
    # Nothing was written, and the same call succeeds once the lock is free.
    assert store.get("ORD-BUSY") is None
    store.create_if_absent(make_record("ORD-BUSY", clock.now()))
    assert store.get("ORD-BUSY").order_id == "ORD-BUSY"
    store.close()


def test_sqlite_error_whose_text_says_locked_or_busy_is_still_permanent(tmp_path):
    # The old mapping read the message: "no such table: locked_busy" would have been
    # taken for a busy database. The code (SQLITE_ERROR) says it is not.
    db = Database(tmp_path / "x.sqlite")
    with pytest.raises(StoreError) as info, db.use() as conn:
        conn.execute("SELECT * FROM locked_busy")
    db.close()
    assert type(info.value) is StoreError
    assert info.value.__cause__.sqlite_errorname == "SQLITE_ERROR"
    assert info.value.retryable is False
    assert info.value.retry_after is None


def test_sqlite_constraint_violation_is_permanent(tmp_path):
    db = Database(tmp_path / "x.sqlite")
    with db.use() as conn:
        conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES ('a')")
    with pytest.raises(StoreError) as info, db.use() as conn:
        conn.execute("INSERT INTO t VALUES ('a')")
    db.close()
    assert type(info.value) is StoreError
    assert info.value.__cause__.sqlite_errorname == "SQLITE_CONSTRAINT_PRIMARYKEY"
    assert info.value.retryable is False
