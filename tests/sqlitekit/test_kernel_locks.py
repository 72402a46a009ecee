"""The kernel's view of a process's write locks, as :mod:`sqlitekit.kernel_locks` reads it."""

import os
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import sqlitekit
from sqlitekit.holds import MAX_LOCK_FILES, HoldRecord, read_lock_files
from sqlitekit.kernel_locks import holds_write_lock, kernel_inode, kernel_view, lock_file_path

linux = pytest.mark.skipif(not kernel_view(), reason="the kernel's view: Linux /proc")
fcntl = pytest.importorskip("fcntl")


def queued_in_kernel(pid: int) -> bool:
    """Tell whether the kernel's lock table lists a ``flock`` request of ``pid`` as waiting."""
    with open("/proc/locks") as table:
        return any(line.split()[1:3] == ["->", "FLOCK"] and line.split()[5] == str(pid)
                   for line in table)


@linux
def test_a_lock_counts_only_through_the_descriptor_that_was_granted_it(tmp_path):
    db = tmp_path / "hub.sqlite"
    lock = sqlitekit.connect(db).write_lock
    fd, inode, pid = lock._fd, lock._inode, os.getpid()
    waiter = os.open(f"{db}.lock", os.O_RDWR)  # another open file of the same lock file
    assert holds_write_lock(pid, fd, inode) is False
    with lock:
        assert holds_write_lock(pid, fd, inode) is True
        queued = threading.Thread(target=fcntl.flock, args=(waiter, fcntl.LOCK_EX))
        queued.start()
        deadline = time.monotonic() + 30
        while not queued_in_kernel(pid):  # until the kernel lists this process's request as waiting
            assert time.monotonic() < deadline, "the request never queued"
            time.sleep(0.01)
        assert holds_write_lock(pid, waiter, inode) is False  # waiting is not holding
    queued.join(30)
    assert holds_write_lock(pid, fd, inode) is False
    assert holds_write_lock(pid, waiter, inode) is True
    assert holds_write_lock(pid, waiter, inode + 1) is False  # another file's number
    assert lock_file_path(pid, fd) == f"{db}.lock"
    os.close(waiter)


@linux
def test_a_descriptor_number_reused_for_another_file_is_not_the_write_lock(tmp_path):
    first = os.open(tmp_path / "hub.sqlite.lock", os.O_RDWR | os.O_CREAT)
    inode = kernel_inode(first)
    assert inode == os.fstat(first).st_ino
    os.close(first)
    reused = os.open(tmp_path / "app-own.lock", os.O_RDWR | os.O_CREAT)
    assert reused == first  # the lowest free number
    fcntl.flock(reused, fcntl.LOCK_EX)
    assert holds_write_lock(os.getpid(), reused, inode) is False
    assert holds_write_lock(os.getpid(), reused, kernel_inode(reused)) is True
    os.close(reused)


@linux
def test_a_shared_lock_a_closed_descriptor_and_a_gone_process_hold_no_write_lock(tmp_path):
    fd = os.open(tmp_path / "shared.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)
    inode = kernel_inode(fd)
    assert holds_write_lock(os.getpid(), fd, inode) is False
    os.close(fd)
    assert holds_write_lock(os.getpid(), fd, inode) is False
    assert holds_write_lock(2**22 + 1, 3, inode) is False  # above Linux's default pid_max
    assert lock_file_path(os.getpid(), fd) == f"fd {fd}"


def test_the_record_names_the_write_lock_files_opened_before_and_after_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlitekit, "_holds", None)
    # Only this test's files: a process that ran other tests has more than a record names.
    monkeypatch.setattr(sqlitekit, "_path_locks", {})
    before = sqlitekit.connect(tmp_path / "before.sqlite").write_lock
    record = sqlitekit.record_holds()
    after = sqlitekit.connect(tmp_path / "after.sqlite").write_lock
    plain = sqlite3.connect(tmp_path / "app.sqlite")  # the app's own file: not a write lock
    files = read_lock_files(record._buf)
    assert files == {before._fd: before._inode, after._fd: after._inode}
    assert before._inode == os.stat(tmp_path / "before.sqlite.lock").st_ino
    plain.close()


def test_a_record_names_at_most_its_room_of_files():
    record = HoldRecord()
    for fd in range(100, 100 + MAX_LOCK_FILES + 5):
        record.lock_file(fd, fd * 10)
    record.lock_file(100, 7)  # named once, as first named
    named = {fd: fd * 10 for fd in range(100, 100 + MAX_LOCK_FILES)}
    assert read_lock_files(record._buf) == named
    record.taken(1)  # a hold leaves the names as they are
    assert read_lock_files(record._buf) == named


def test_a_record_stopped_mid_write_still_names_its_files():
    record = HoldRecord()
    record.lock_file(5, 55)
    record.lock_file(6, 66)
    struct.pack_into("<Q", record._buf, 0, record._seq + 1)  # odd for good: a writer stopped
    assert record.read() == (None, 0.0)  # its times: unreadable, no hold
    assert read_lock_files(record._buf) == {5: 55, 6: 66}


# Takes a write lock, forks a child that outlives it, says "ready" and waits to be killed.
FORKS_WHILE_HOLDING = """
import os, sys, time, sqlitekit
sqlitekit.record_holds()
lock = sqlitekit.connect(sys.argv[1]).write_lock
lock.__enter__()
if os.fork() == 0:
    ok = sqlitekit._holds is None and not sqlitekit._path_locks and lock._fd is None
    print('child', ok, flush=True)
    time.sleep(60)
    os._exit(0)
time.sleep(0.5)
print('ready', flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX")
def test_a_forked_child_lets_go_of_its_parent_s_write_lock(tmp_path):
    db = tmp_path / "hub.sqlite"
    parent = subprocess.Popen([sys.executable, "-c", FORKS_WHILE_HOLDING, str(db)],
                              stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2], start_new_session=True)
    try:
        assert sorted(parent.stdout.readline().split() for _ in range(2)) == [
            ["child", "True"], ["ready"]]
        probe = os.open(f"{db}.lock", os.O_RDWR)
        with pytest.raises(BlockingIOError):  # the parent holds it
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        parent.kill()
        parent.wait(30)
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # freed, though the child lives
        os.close(probe)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait(30)
