"""Worker processes of ``devhost start --workers N``: readiness, replacement, stop."""

import os
import signal
import sys
import threading
import time

import pytest

from devhost.run.worker_processes import WorkerProcesses, WorkerStartError
from sqlitekit.kernel_locks import kernel_view
from tests.sqlitekit.test_kernel_locks import queued_in_kernel

pytestmark = pytest.mark.skipif(os.name != "posix", reason="ready pipes need fd passing")

# Each script gets "--ready-fd N" appended, as the real worker does.
READY_THEN_WAIT = ("import os, sys, time; print('app chatter on stdout', flush=True); "
                   "os.write(int(sys.argv[-1]), b'ready\\n'); time.sleep(60)")
EXIT_BEFORE_READY = "import sys; sys.exit(3)"
READY_THEN_EXIT = "import os, sys; os.write(int(sys.argv[-1]), b'ready\\n'); sys.exit(0)"
IGNORES_SIGTERM = ("import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
                   " os.write(int(sys.argv[-1]), b'ready\\n'); time.sleep(60)")
NEVER_READY = "import time; time.sleep(60)"


def workers(script, count=1):
    return WorkerProcesses([sys.executable, "-c", script], count)


def test_ready_comes_from_the_pipe_not_from_what_the_app_prints():
    procs = workers(READY_THEN_WAIT, 2)
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60) is True
        assert all(p.poll() is None for p in procs.procs)
    finally:
        procs.stop(grace_s=5)
    assert all(p.returncode == -signal.SIGTERM for p in procs.procs)


def test_a_worker_that_exits_during_start_up_is_reported_with_its_exit_code():
    procs = workers(EXIT_BEFORE_READY)
    with pytest.raises(WorkerStartError, match="exit code 3"):
        procs.wait_ready(threading.Event(), timeout_s=60)
    procs.stop(grace_s=0)


def killed_first_then_ready(marker):
    """A worker SIGKILLed during its first start-up (as a chaos test does); the next is ready."""
    return (f"import os, signal, sys, time, pathlib; m = pathlib.Path({str(marker)!r}); "
            "n = int(m.read_text()) if m.exists() else 0; m.write_text(str(n + 1)); "
            "n == 0 and os.kill(os.getpid(), signal.SIGKILL); "
            "os.write(int(sys.argv[-1]), b'ready\\n'); time.sleep(60)")


def test_a_worker_killed_by_a_signal_during_start_up_is_replaced(tmp_path, caplog):
    marker = tmp_path / "starts"
    procs = workers(killed_first_then_ready(marker))
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60) is True
        assert marker.read_text() == "2" and len(procs.procs) == 1
        assert procs.procs[0].poll() is None
    finally:
        procs.stop(grace_s=5)
    assert [r.getMessage().split(" was ")[1] for r in caplog.records
            if "during start-up" in r.getMessage()] == [
        f"killed by signal {signal.SIGKILL.value} during start-up; starting a new one"]


def test_a_worker_killed_at_every_start_up_ends_the_start():
    procs = workers("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    with pytest.raises(WorkerStartError, match=f"exit code -{signal.SIGKILL.value}"):
        procs.wait_ready(threading.Event(), timeout_s=60)
    procs.stop(grace_s=0)


def test_stop_during_start_up_does_not_wait_for_readiness():
    procs = workers(NEVER_READY)
    stop = threading.Event()
    stop.set()
    assert procs.wait_ready(stop, timeout_s=60) is False
    procs.stop(grace_s=5)
    assert procs.procs[0].returncode == -signal.SIGTERM


def test_a_worker_that_died_is_replaced():
    procs = workers(READY_THEN_EXIT)
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60)
        first = procs.procs[0]
        first.wait(timeout=30)
        assert procs.replace_exited() == 1
        assert len(procs.procs) == 1 and procs.procs[0].pid != first.pid
        assert procs.replace_exited() in (0, 1)  # the new one may have exited already
    finally:
        procs.stop(grace_s=5)


def test_a_worker_that_ignores_sigterm_is_killed_after_the_grace_period():
    procs = workers(IGNORES_SIGTERM)
    assert procs.wait_ready(threading.Event(), timeout_s=60)
    began = time.monotonic()
    procs.stop(grace_s=0.5)
    assert procs.procs[0].returncode == -signal.SIGKILL
    assert time.monotonic() - began < 30


# Takes the write lock of a SQLite file (argv[1]) with its hold recorded ("--hold-record"
# NAME) and keeps it, as a worker frozen inside a transaction does; "free" takes none.
HOLDS_LOCK = ("import os, sys, time, sqlitekit; a = sys.argv; "
              "sqlitekit.record_holds(a[a.index('--hold-record') + 1]); "
              "lock = sqlitekit.connect(a[1]).write_lock; "
              "a[2] == 'hold' and lock.__enter__(); "
              "os.write(int(a[-1]), b'ready\\n'); time.sleep(60)")


def _flock_free(db) -> bool:
    fcntl = pytest.importorskip("fcntl")
    fd = os.open(f"{db}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_worker_holding_a_write_lock_past_the_limit_is_killed_and_replaced(tmp_path):
    db = tmp_path / "hub.sqlite"
    procs = WorkerProcesses([sys.executable, "-c", HOLDS_LOCK, str(db), "hold"], 1,
                            hold_records=True)
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60)
        holder = procs.procs[0]
        assert _flock_free(db) is False
        assert procs.end_stalled(limit_s=60.0) == 0  # held, but not that long yet
        deadline = time.monotonic() + 30
        while procs.end_stalled(limit_s=0.5) == 0:
            assert time.monotonic() < deadline, "the holder was never ended"
            time.sleep(0.1)
        assert holder.returncode == -signal.SIGKILL
        assert _flock_free(db) is True  # the kernel freed the dead holder's lock
        assert procs.replace_exited() == 1 and procs.procs[0].pid != holder.pid
    finally:
        procs.stop(grace_s=5)


def test_a_worker_holding_no_lock_is_never_ended(tmp_path):
    procs = WorkerProcesses([sys.executable, "-c", HOLDS_LOCK, str(tmp_path / "a.sqlite"),
                             "free"], 1, hold_records=True)
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60)
        [block] = procs.hold_blocks.values()
        assert block.read()[0] is None
        assert procs.end_stalled(limit_s=0.0) == 0  # any hold at all would be past this
        assert procs.procs[0].poll() is None
    finally:
        procs.stop(grace_s=5)


def test_a_worker_frozen_with_a_write_lock_during_start_up_is_ended_and_replaced(tmp_path):
    # Holds the lock and never reports ready: each replacement does the same, so the
    # start ends after the replacements a killed start-up is allowed, not after timeout_s.
    db = tmp_path / "hub.sqlite"
    never_ready = HOLDS_LOCK.replace("os.write(int(a[-1]), b'ready\\n'); ", "")
    procs = WorkerProcesses([sys.executable, "-c", never_ready, str(db), "hold"], 1,
                            hold_records=True)
    began = time.monotonic()
    try:
        with pytest.raises(WorkerStartError, match=f"exit code -{signal.SIGKILL.value}"):
            procs.wait_ready(threading.Event(), timeout_s=120, lock_hold_limit_s=0.5)
        assert time.monotonic() - began < 60
        assert _flock_free(db) is True
    finally:
        procs.stop(grace_s=0)


# A worker in one of the states a write lock can be in (argv: database, state), its record
# attached: "unrecorded" holds the flock with no hold noted (stopped between ``flock`` and
# its record), "recorded" holds it noted, "waiting" queues behind the test's own hold,
# "cycling" takes and lets go of it without end, "app" holds a lock of its own code on
# ``<its own SQLite file>.lock``, "reused" holds the app's own lock through the number the
# lock's descriptor had (the app closed it), "midwrite" holds the write lock and stopped
# inside a write of its record (the sequence odd for good), and "free" takes none.
LOCK_STATES = """
import fcntl, os, sys, time, sqlitekit
a = sys.argv
sqlitekit.record_holds(a[a.index('--hold-record') + 1])
db, state = a[1], a[2]
lock = sqlitekit.connect(db).write_lock
ready = lambda: os.write(int(a[-1]), b'ready\\n')
if state == 'unrecorded':  # the write lock's own flock, as WriteLock takes it
    fcntl.flock(lock._fd, fcntl.LOCK_EX)
elif state == 'recorded':
    lock.__enter__()
elif state == 'reused':
    os.close(lock._fd)
    fd = os.open(db + '.app-own.lock', os.O_RDWR | os.O_CREAT)
    assert fd == lock._fd
    fcntl.flock(fd, fcntl.LOCK_EX)
elif state == 'midwrite':
    import struct
    fcntl.flock(lock._fd, fcntl.LOCK_EX)
    record = sqlitekit._holds
    struct.pack_into('<Q', record._buf, 0, record._seq + 1)
elif state == 'app':
    import sqlite3
    sqlite3.connect(db + '.app').execute('CREATE TABLE t (x)')
    fcntl.flock(os.open(db + '.app.lock', os.O_RDWR | os.O_CREAT), fcntl.LOCK_EX)
ready()
if state == 'waiting':
    lock.__enter__()
while state == 'cycling':
    with lock:
        time.sleep(0.001)
time.sleep(120)
"""


class StepClock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


def _until(condition, what, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.mark.skipif(not kernel_view(), reason="the kernel's view: Linux /proc")
@pytest.mark.parametrize(("state", "ended"), [
    ("unrecorded", True), ("recorded", True), ("midwrite", True), ("waiting", False),
    ("cycling", False), ("app", False), ("reused", False), ("free", False)])
def test_a_write_lock_the_kernel_shows_held_with_no_record_moving_ends_the_worker(
        tmp_path, caplog, state, ended):
    fcntl = pytest.importorskip("fcntl")
    db = tmp_path / "hub.sqlite"
    import sqlitekit
    sqlitekit.connect(db).close()  # the database and its lock file exist
    own = os.open(f"{db}.lock", os.O_RDWR)
    if state == "waiting":
        fcntl.flock(own, fcntl.LOCK_EX)  # the worker queues behind this
    clock = StepClock()
    procs = WorkerProcesses([sys.executable, "-c", LOCK_STATES, str(db), state], 1,
                            hold_records=True, clock=clock)
    try:
        assert procs.wait_ready(threading.Event(), timeout_s=60)
        worker = procs.procs[0]
        [block] = procs.hold_blocks.values()
        if state == "waiting":
            _until(lambda: queued_in_kernel(worker.pid), "the worker never queued")
        # A limit no real hold here reaches: only the kernel's view, on the test's clock.
        assert procs.end_stalled(limit_s=60.0) == 0  # first seen by the kernel, if at all
        if state == "cycling":
            first = block.sequence()
            _until(lambda: block.sequence() != first, "the worker never took the lock")
        clock.now += 61.0
        assert procs.end_stalled(limit_s=60.0) == int(ended)
        assert (worker.returncode == -signal.SIGKILL) is ended
        if state in ("unrecorded", "midwrite"):
            assert block.read()[0] is None  # the record alone would never have ended it
        if ended:
            assert f"the kernel shows it holding {db}.lock, no hold taken" in caplog.text
    finally:
        os.close(own)
        procs.stop(grace_s=5)
