"""sqlitekit.is_disk_full, and what a full database leaves behind: nothing half-written."""

import errno
import sqlite3

import pytest

import sqlitekit
from sqlitekit import is_busy, is_disk_full


def full_database(tmp_path):
    """A WAL database that cannot grow: every new page is refused with SQLITE_FULL."""
    conn = sqlitekit.connect(tmp_path / "full.sqlite")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
    with sqlitekit.write(conn):
        conn.execute("INSERT INTO t VALUES (1, ?)", (b"first",))
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")
    return conn


def test_sqlite_full_is_disk_full_and_its_transaction_wrote_nothing(tmp_path):
    conn = full_database(tmp_path)
    with pytest.raises(sqlite3.OperationalError) as info:
        with sqlitekit.write(conn):
            conn.execute("UPDATE t SET v = ? WHERE k = 1", (b"second",))
            for k in range(2, 200):
                conn.execute("INSERT INTO t VALUES (?, ?)", (k, b"x" * 3000))
    assert info.value.sqlite_errorname == "SQLITE_FULL"
    assert is_disk_full(info.value) and not is_busy(info.value)
    assert [tuple(r) for r in conn.execute("SELECT k, v FROM t")] == [(1, b"first")]
    # Once there is room again the same connection writes: no transaction was left open.
    conn.execute("PRAGMA max_page_count=1000000")
    with sqlitekit.write(conn):
        conn.execute("INSERT INTO t VALUES (2, ?)", (b"later",))
    assert [r[0] for r in conn.execute("SELECT k FROM t")] == [1, 2]


def test_a_full_disk_is_found_through_the_exceptions_raised_from_it(tmp_path):
    conn = full_database(tmp_path)
    try:
        try:
            conn.execute("INSERT INTO t VALUES (2, ?)", (b"x" * 100_000,))
        except sqlite3.OperationalError as exc:
            raise RuntimeError("saving the order failed") from exc
    except RuntimeError as wrapped:
        assert is_disk_full(wrapped)
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))


def test_other_errors_are_not_a_full_disk(tmp_path):
    conn = sqlitekit.connect(tmp_path / "ok.sqlite")
    with pytest.raises(sqlite3.OperationalError) as info:
        conn.execute("SELECT * FROM missing")
    assert not is_disk_full(info.value)
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(ValueError("database or disk is full"))  # text is never read
