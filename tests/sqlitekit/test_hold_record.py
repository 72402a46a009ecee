"""sqlitekit.holds: write-lock hold records in shared memory, read by another process."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqlitekit import holds
from sqlitekit.holds import (
    READ_ATTEMPTS,
    HoldBlock,
    HoldRecord,
    attach,
    read_buffer,
    read_hold,
    remove_stale_blocks,
)

REPO = Path(__file__).resolve().parents[2]

# Attaches the block argv[1] as sqlitekit.record_holds does, then obeys stdin line by line:
# "take" / "release" a hold, printing the record's values after each; "exit" exits.
HOLDER = """
import sys, sqlitekit
record = sqlitekit.record_holds(sys.argv[1])
print("attached", flush=True)
for line in sys.stdin:
    if line.strip() == "take":
        record.taken(1)
    elif line.strip() == "release":
        record.released(1)
    else:
        break
    since, longest = record.read()
    print(repr(since), repr(longest), flush=True)
"""


@pytest.fixture
def block():
    made = HoldBlock()
    yield made
    made.close()


def holder(name: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, name], cwd=REPO, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout.readline() == "attached\n"
    return proc


def ask(proc: subprocess.Popen[str], what: str) -> tuple[float | None, float]:
    proc.stdin.write(what + "\n")
    proc.stdin.flush()
    since, longest = proc.stdout.readline().split()
    return eval(since), float(longest)  # repr of a float or None, written by the child


def test_take_release_and_longest_in_one_process(block):
    record = HoldRecord(attach(block.name))
    assert block.read() == (None, 0.0)
    before = time.monotonic()
    record.taken(1)
    since, longest = block.read()
    assert before <= since <= time.monotonic() and longest == 0.0
    record.taken(2)
    assert block.read()[0] == since  # the oldest hold counts
    record.released(1)
    later, _ = block.read()
    assert later is not None and later >= since  # hold 2 is still held
    record.released(2)
    idle, longest = block.read()
    assert idle is None and longest == record.longest_s and longest > 0.0


def test_another_process_reads_the_record_its_holder_writes(block):
    proc = holder(block.name)
    try:
        taken = ask(proc, "take")
        assert taken[0] is not None
        assert block.read() == taken == read_hold(block.name)
        released = ask(proc, "release")
        assert released[0] is None and released[1] > 0.0
        assert block.read() == released == read_hold(block.name)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_sigkilled_holder_leaves_the_block_to_its_creator(block):
    proc = holder(block.name)
    since, _ = ask(proc, "take")
    proc.kill()
    proc.wait()
    # A SharedMemory(name) attacher's resource tracker would have removed the name now.
    assert read_hold(block.name) == (since, 0.0)
    assert block.read() == (since, 0.0)
    proc = holder(block.name)  # one exiting normally leaves it too
    since, _ = ask(proc, "take")
    proc.communicate("exit\n", timeout=30)
    assert read_hold(block.name) == (since, 0.0)


@pytest.mark.skipif(os.name != "posix", reason="a Windows block lives while a handle is open")
def test_only_the_creator_removes_the_block():
    made = HoldBlock()
    attach(made.name).close()
    made.close()
    with pytest.raises(FileNotFoundError):
        attach(made.name)
    assert read_hold(made.name) == (None, 0.0)


# Creates a block as the host does, says its name and how many child processes it has now.
CREATOR = """
import psutil
from sqlitekit.holds import HoldBlock
block = HoldBlock()
print(block.name, len(psutil.Process().children()), flush=True)
input()
"""


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="lists blocks in /dev/shm (Linux)")
def test_a_sigkilled_creator_starts_no_helper_and_its_blocks_are_removed_later(block):
    proc = subprocess.Popen([sys.executable, "-c", CREATOR], cwd=REPO, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    name, children = proc.stdout.readline().split()
    assert children == "0"  # no resource tracker, which a kill meant for a worker could hit
    proc.kill()
    proc.wait()
    attach(name).close()  # left behind by the dead creator
    assert remove_stale_blocks() >= 1
    with pytest.raises(FileNotFoundError):
        attach(name)
    attach(block.name).close()  # a live creator's block stays


def test_a_torn_read_is_retried_and_returns_the_finished_write(monkeypatch):
    passes = iter([(1, 5.0, 0.0, 1),  # odd: a write under way
                   (2, 99.0, 0.0, 4),  # the sequence moved during the read
                   (4, 7.0, 1.5, 4)])
    monkeypatch.setattr(holds, "_load", lambda buf: next(passes))
    assert read_buffer(bytearray(24)) == (7.0, 1.5)


def test_a_record_never_seen_whole_reads_as_no_hold(monkeypatch):
    calls = []
    monkeypatch.setattr(holds, "_load", lambda buf: calls.append(1) or (3, 1.0, 0.0, 3))
    assert read_buffer(bytearray(24)) == (None, 0.0)  # 1.0 s since boot would be a kill
    assert len(calls) == READ_ATTEMPTS


def test_a_writer_stopped_mid_write_or_garbage_reads_as_no_hold():
    buf = bytearray(24)
    holds._SEQ.pack_into(buf, 0, 7)
    holds._VALUES.pack_into(buf, 8, 1.0, 0.0)
    assert read_buffer(buf) == (None, 0.0)
    holds._SEQ.pack_into(buf, 0, 8)
    holds._VALUES.pack_into(buf, 8, float("nan"), -1.0)
    assert read_buffer(buf) == (None, 0.0)


HAMMER = """
import sys, time, sqlitekit
record = sqlitekit.record_holds(sys.argv[1])
print(time.monotonic(), flush=True)
for _ in range(int(sys.argv[2])):
    record.taken(1)
    record.released(1)
print("done", flush=True)
"""


def test_reads_while_another_process_writes_are_never_torn(block):
    proc = subprocess.Popen([sys.executable, "-c", HAMMER, block.name, "20000"], cwd=REPO,
                            text=True, stdout=subprocess.PIPE)
    try:
        started = float(proc.stdout.readline())
        whole, longest = 0, 0.0
        while proc.poll() is None or whole == 0:
            since, now_longest = block.read()
            if (since, now_longest) == (None, 0.0):
                continue  # never seen whole (it is written all the time): no hold
            assert since is None or started <= since <= time.monotonic()
            assert longest <= now_longest < 60.0  # never goes back, never garbage
            longest, whole = now_longest, whole + 1
        assert proc.stdout.readline() == "done\n"
        idle, final = block.read()
        # The reads in the loop may all have come before the first hold ended (a starved
        # reader): only the final read must show a hold's length, and none that went back.
        assert idle is None and final >= longest and final > 0.0
    finally:
        proc.kill()
        proc.wait()
