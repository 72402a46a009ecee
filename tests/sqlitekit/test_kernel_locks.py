"""The kernel's view of a process's write locks, as :mod:`sqlitekit.kernel_locks` reads it."""

import os
import sqlite3
import threading

import pytest

import sqlitekit
from sqlitekit.holds import MAX_LOCK_FILES, HoldRecord, read_lock_fds
from sqlitekit.kernel_locks import holds_write_lock, kernel_view, lock_file_path

linux = pytest.mark.skipif(not kernel_view(), reason="the kernel's view: Linux /proc")
fcntl = pytest.importorskip("fcntl")


@linux
def test_a_lock_counts_only_through_the_descriptor_that_was_granted_it(tmp_path):
    db = tmp_path / "hub.sqlite"
    lock = sqlitekit.connect(db).write_lock
    fd, pid = lock._fd, os.getpid()
    waiter = os.open(f"{db}.lock", os.O_RDWR)  # another open file of the same lock file
    assert holds_write_lock(pid, fd) is False
    with lock:
        assert holds_write_lock(pid, fd) is True
        queued = threading.Thread(target=fcntl.flock, args=(waiter, fcntl.LOCK_EX))
        queued.start()
        with open("/proc/locks") as table:  # until the kernel lists the request as waiting
            while not any("->" in line for line in table):
                table.seek(0)
        assert holds_write_lock(pid, waiter) is False  # waiting is not holding
    queued.join(30)
    assert holds_write_lock(pid, fd) is False and holds_write_lock(pid, waiter) is True
    assert lock_file_path(pid, fd) == f"{db}.lock"
    os.close(waiter)


@linux
def test_a_shared_lock_a_closed_descriptor_and_a_gone_process_hold_no_write_lock(tmp_path):
    fd = os.open(tmp_path / "shared.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)
    assert holds_write_lock(os.getpid(), fd) is False
    os.close(fd)
    assert holds_write_lock(os.getpid(), fd) is False
    assert holds_write_lock(2**22 + 1, 3) is False  # above Linux's default pid_max
    assert lock_file_path(os.getpid(), fd) == f"fd {fd}"


def test_the_record_names_the_write_lock_files_opened_before_and_after_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlitekit, "_holds", None)
    # Only this test's files: a process that ran other tests has more than a record names.
    monkeypatch.setattr(sqlitekit, "_path_locks", {})
    before = sqlitekit.connect(tmp_path / "before.sqlite").write_lock
    record = sqlitekit.record_holds()
    after = sqlitekit.connect(tmp_path / "after.sqlite").write_lock
    plain = sqlite3.connect(tmp_path / "app.sqlite")  # the app's own file: not a write lock
    fds = read_lock_fds(record._buf)
    assert before._fd in fds and after._fd in fds
    assert len(fds) == len(set(fds))
    plain.close()


def test_a_record_names_at_most_its_room_of_files():
    record = HoldRecord()
    for fd in range(100, 100 + MAX_LOCK_FILES + 5):
        record.lock_file(fd)
    record.lock_file(100)  # named once
    assert read_lock_fds(record._buf) == tuple(range(100, 100 + MAX_LOCK_FILES))
    record.taken(1)  # a hold leaves the names as they are
    assert read_lock_fds(record._buf) == tuple(range(100, 100 + MAX_LOCK_FILES))
