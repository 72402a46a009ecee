"""sqlitekit.group_commit: several threads' write operations in one transaction.

Batches are made on purpose (tests.support.batches); each test asserts what every caller
got and what the file holds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from functools import partial

import pytest

from sqlitekit import SharedConnection
from sqlitekit.group_commit import GroupCommit
from tests.support.batches import Batch


@pytest.fixture
def shared(tmp_path):
    shared = SharedConnection(tmp_path / "g.sqlite")
    shared._conn.executescript(
        "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
        "CREATE TABLE t (v TEXT UNIQUE, parent INTEGER REFERENCES parent(id)"
        " DEFERRABLE INITIALLY DEFERRED);")
    yield shared
    shared.close()


def insert(value: str, parent: int | None = None) -> Callable[[sqlite3.Connection], int]:
    def op(conn: sqlite3.Connection) -> int:
        conn.execute("INSERT INTO t (v, parent) VALUES (?, ?)", (value, parent))
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    return op


def values(shared: SharedConnection) -> list[str]:
    return [r[0] for r in shared._conn.execute("SELECT v FROM t ORDER BY rowid")]


def test_an_operation_alone_runs_in_its_own_transaction(shared):
    group = GroupCommit(shared._conn, shared._lock)
    assert group.run(insert("a")) == 1
    assert group.run(insert("b")) == 2
    assert group.transactions == 2
    assert values(shared) == ["a", "b"]


def test_queued_operations_share_one_transaction_in_queue_order(shared):
    group = GroupCommit(shared._conn, shared._lock)
    results = Batch(group).run([insert("a"), insert("b"), insert("c")])
    # Each saw the rows of those queued before it: one transaction, in order.
    assert results == {-1: "held", 0: 1, 1: 2, 2: 3}
    assert group.transactions == 2  # the holder's, then one for all three
    assert values(shared) == ["a", "b", "c"]


def test_an_operation_that_raises_fails_alone_and_the_others_commit(shared):
    group = GroupCommit(shared._conn, shared._lock)
    shared._conn.execute("INSERT INTO t (v) VALUES ('taken')")
    results = Batch(group).run([insert("a"), insert("taken"), insert("c")])
    assert results[0] == 2 and results[2] == 3
    assert isinstance(results[1], sqlite3.IntegrityError)
    # The batch rolled back, then each ran in a transaction of its own, in the same order.
    assert group.transactions == 1 + 1 + 3
    assert values(shared) == ["taken", "a", "c"]


def test_a_failed_commit_fails_every_operation_of_the_batch_none_run_again(shared):
    group = GroupCommit(shared._conn, shared._lock)
    # A deferred foreign key is checked at COMMIT: the operation itself succeeds.
    results = Batch(group).run([insert("a"), insert("orphan", parent=7), insert("c")])
    assert all(isinstance(results[i], sqlite3.IntegrityError) for i in range(3))
    assert group.transactions == 2
    assert values(shared) == []
    assert not shared._conn.in_transaction


def test_a_batch_holds_at_most_max_batch_operations(shared):
    group = GroupCommit(shared._conn, shared._lock, max_batch=2)
    results = Batch(group).run([insert("a"), insert("b"), insert("c")])
    assert [results[i] for i in range(3)] == [1, 2, 3]
    assert group.transactions == 1 + 2
    assert not group._leading and not group._queue


def test_the_leader_returns_its_own_result_and_raises_its_own_error(shared):
    group = GroupCommit(shared._conn, shared._lock)
    shared._conn.execute("INSERT INTO t (v) VALUES ('taken')")
    with pytest.raises(sqlite3.IntegrityError):
        group.run(insert("taken"))
    assert group.run(insert("free")) == 2
    assert not group._leading


def test_run_from_inside_an_operation_is_refused(shared):
    group = GroupCommit(shared._conn, shared._lock)
    with pytest.raises(RuntimeError, match="inside an operation"):
        group.run(lambda conn: group.run(insert("x")))
    assert values(shared) == []
    assert group.run(insert("y")) == 1


@pytest.mark.parametrize("max_batch", [0, -1, True, 1.5])
def test_max_batch_must_be_a_positive_integer(shared, max_batch):
    with pytest.raises(ValueError, match="max_batch: must be a positive integer"):
        GroupCommit(shared._conn, shared._lock, max_batch=max_batch)


def test_many_threads_each_get_their_own_result(shared):
    group = GroupCommit(shared._conn, shared._lock)
    got: dict[str, int] = {}

    def worker(n: int) -> None:
        for i in range(25):
            value = f"{n}-{i}"
            got[value] = group.run(insert(value))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(values(shared)) == sorted(got)
    assert sorted(got.values()) == list(range(1, 201))  # each saw its own insert committed
    assert group.transactions <= 200


def test_bookkeeping_runs_once_per_transaction_and_is_forgotten_on_rollback(tmp_path):
    import sqlitekit

    conn = sqlitekit.connect(tmp_path / "hooks.sqlite", synchronous="NORMAL")
    conn.execute("CREATE TABLE t (v INTEGER)")
    events = []
    group = GroupCommit(conn, threading.RLock(),
                        before_commit=lambda c: events.append(("commit", c.in_transaction)),
                        after_rollback=lambda: events.append(("rollback", None)))

    def insert(v):
        return lambda c: c.execute("INSERT INTO t VALUES (?)", (v,)).rowcount

    def fail(c):
        raise ValueError("no")

    Batch(group).run([insert(1), insert(2)])
    assert events == [("commit", True), ("commit", True)]  # the holder's, the batch's
    events.clear()
    results = Batch(group).run([insert(3), fail, insert(4)])
    assert isinstance(results[1], ValueError)
    # The batch rolled back, then each ran alone: three commits around one rollback each.
    assert events == [("commit", True), ("rollback", None), ("commit", True),
                      ("rollback", None), ("commit", True)]
    assert [r[0] for r in conn.execute("SELECT v FROM t ORDER BY v")] == [1, 2, 3, 4]


def test_a_one_statement_operation_alone_runs_without_begin_and_commit(shared):
    group = GroupCommit(shared._conn, shared._lock)
    seen: list[str] = []
    shared._conn.set_trace_callback(seen.append)
    try:
        assert group.run(insert("a"), one_statement=True) == 1
        alone = list(seen)
        results = Batch(group).run([insert("b"), insert("c")])
    finally:
        shared._conn.set_trace_callback(None)
    # Alone: its statements in autocommit. Queued behind another: one shared transaction.
    assert alone == ["INSERT INTO t (v, parent) VALUES ('a', NULL)", "SELECT COUNT(*) FROM t"]
    assert results == {-1: "held", 0: 2, 1: 3}
    assert group.transactions == 1 + 2
    assert values(shared) == ["a", "b", "c"]


def test_a_one_statement_operation_batched_with_others_shares_their_transaction(shared):
    group = GroupCommit(shared._conn, shared._lock)
    seen: list[str] = []
    shared._conn.set_trace_callback(seen.append)
    try:
        calls = [partial(group.run, insert(v), one_statement=True) for v in "ab"]
        results = Batch(group).calls(calls)
    finally:
        shared._conn.set_trace_callback(None)
    assert results == {-1: "held", 0: 1, 1: 2}
    assert seen.count("BEGIN IMMEDIATE") == 2  # the holder's, then one for both
    assert values(shared) == ["a", "b"]
