"""One writing statement as its own transaction, queued with the other writers."""

import threading

import pytest

import sqlitekit


def test_one_statement_commits_alone_and_returns_its_rows(tmp_path):
    conn = sqlitekit.connect(tmp_path / "a.sqlite")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    written = sqlitekit.write_one(conn, "INSERT INTO t (v) VALUES (?), (?) RETURNING k",
                                  ("a", "b"))
    assert written.rowcount == 2 and [r["k"] for r in written.rows] == [1, 2]
    assert len(seen) == 1 and not conn.in_transaction  # no BEGIN, no COMMIT: committed
    other = sqlitekit.connect(tmp_path / "a.sqlite")
    assert [tuple(r) for r in other.execute("SELECT v FROM t ORDER BY k")] == [("a",), ("b",)]


def test_it_waits_for_a_writer_holding_the_lock_and_refuses_inside_a_transaction(tmp_path):
    conn = sqlitekit.connect(tmp_path / "a.sqlite")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
    second = sqlitekit.connect(tmp_path / "a.sqlite")
    order: list[str] = []
    with sqlitekit.write(conn):
        writer = threading.Thread(target=lambda: (
            sqlitekit.write_one(second, "INSERT INTO t VALUES (2)"), order.append("one")))
        writer.start()
        writer.join(0.2)
        order.append("transaction")
        with pytest.raises(RuntimeError, match="a transaction is open"):
            sqlitekit.write_one(conn, "INSERT INTO t VALUES (1)")
    writer.join()
    assert order == ["transaction", "one"]
    assert [tuple(r) for r in conn.execute("SELECT k FROM t")] == [(2,)]
