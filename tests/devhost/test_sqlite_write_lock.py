"""Writers of one SQLite file queue on one lock, across threads and across processes."""

import multiprocessing
import os
import threading

import pytest

import sqlitekit as db

fcntl = pytest.importorskip("fcntl")  # the cross-process queue is POSIX-only


def _hold_write_lock(path: str, held, release) -> None:
    conn = db.connect(path)
    with db.write(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        held.set()
        release.wait(30)


def _try_flock(path) -> bool:
    fd = os.open(f"{path}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_another_process_holding_a_transaction_holds_the_lock_file(tmp_path):
    path = tmp_path / "hub.sqlite"
    conn = db.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_write_lock, args=(str(path), held, release))
    child.start()
    try:
        assert held.wait(30)
        assert _try_flock(path) is False  # queued behind the child, not sleep-polling
        release.set()
        child.join(30)
        assert child.exitcode == 0
        assert _try_flock(path) is True
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1
    finally:
        release.set()
        child.join(30)


def test_a_killed_holder_releases_the_lock(tmp_path):
    path = tmp_path / "hub.sqlite"
    db.connect(path).execute("CREATE TABLE t (x INTEGER)")
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_write_lock, args=(str(path), held, release))
    child.start()
    assert held.wait(30)
    child.kill()
    child.join(30)
    conn = db.connect(path)
    with db.write(conn):  # would block forever if the lock outlived its holder
        conn.execute("INSERT INTO t VALUES (2)")
    assert [r[0] for r in conn.execute("SELECT x FROM t")] == [2]  # the kill rolled back


def test_threads_of_one_process_take_turns(tmp_path):
    path = tmp_path / "hub.sqlite"
    conn = db.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    inside, overlaps = [], []

    def writer(k: int) -> None:
        c = db.connect(path)
        for _ in range(50):
            with db.write(c):
                inside.append(k)
                if len(inside) != 1:
                    overlaps.append(list(inside))
                c.execute("INSERT INTO t VALUES (?)", (k,))
                inside.pop()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert overlaps == []
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 200


def test_a_failed_block_rolls_back_and_frees_the_lock(tmp_path):
    path = tmp_path / "hub.sqlite"
    conn = db.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(RuntimeError), db.write(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("boom")
    assert _try_flock(path) is True
    with db.write(conn):
        conn.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in conn.execute("SELECT x FROM t")] == [3]


def test_the_hold_record_says_since_when_the_oldest_write_lock_is_held(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "_holds", None)
    record = db.record_holds()
    first, second = db.connect(tmp_path / "a.sqlite"), db.connect(tmp_path / "b.sqlite")
    assert record.read() == (None, 0.0)
    with db.write(first):
        since, _ = record.read()
        assert since is not None
        with db.write(second):
            assert record.read()[0] == since  # the oldest hold counts
        assert record.read()[0] == since
    idle, longest = record.read()
    assert idle is None and longest > 0.0 and longest == record.longest_s
    assert db.read_hold("psm_no_such_block") == (None, 0.0)
