"""sqlitekit.is_busy: SQLite lock conflicts told from other errors by code, with real errors."""

import sqlite3

import pytest

from sqlitekit import is_busy


def error_of(run) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as info:
        run()
    return info.value


def test_busy_past_the_timeout_is_busy(tmp_path):
    path = tmp_path / "busy.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, isolation_level=None, timeout=0)
    error = error_of(lambda: waiter.execute("BEGIN IMMEDIATE"))
    holder.execute("ROLLBACK")
    assert error.sqlite_errorname == "SQLITE_BUSY"
    assert is_busy(error) is True


def test_extended_busy_code_counts(tmp_path):
    # A WAL reader whose snapshot went stale cannot upgrade to a writer: SQLITE_BUSY_SNAPSHOT.
    path = tmp_path / "snapshot.sqlite"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (x)")
    reader = sqlite3.connect(path, isolation_level=None, timeout=0)
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM t").fetchall()
    writer.execute("INSERT INTO t VALUES (1)")
    error = error_of(lambda: reader.execute("INSERT INTO t VALUES (2)"))
    assert error.sqlite_errorname == "SQLITE_BUSY_SNAPSHOT"
    assert is_busy(error) is True


def test_shared_cache_table_lock_is_locked():
    uri = "file:is_busy_locked?mode=memory&cache=shared"
    first = sqlite3.connect(uri, uri=True, isolation_level=None)
    second = sqlite3.connect(uri, uri=True, isolation_level=None)
    first.execute("CREATE TABLE t (x)")
    first.execute("BEGIN")
    first.execute("INSERT INTO t VALUES (1)")
    error = error_of(lambda: second.execute("SELECT * FROM t").fetchall())
    first.execute("ROLLBACK")
    assert error.sqlite_errorname == "SQLITE_LOCKED_SHAREDCACHE"
    assert is_busy(error) is True


def test_other_codes_are_not_busy_whatever_the_text_says():
    conn = sqlite3.connect(":memory:")
    error = error_of(lambda: conn.execute("SELECT * FROM database_is_locked"))
    assert "locked" in str(error)
    assert error.sqlite_errorname == "SQLITE_ERROR"
    assert is_busy(error) is False


def test_error_without_a_code_is_not_busy():
    conn = sqlite3.connect(":memory:")
    conn.close()
    error = error_of(lambda: conn.execute("SELECT 1"))
    assert isinstance(error, sqlite3.ProgrammingError)
    assert is_busy(error) is False
