"""The engine's operations under group commit: each caller gets what it would alone.

Batches made on purpose (tests.support.batches): operations of several threads queued
behind one that holds the lead, then run in one transaction.
"""

from __future__ import annotations

import subprocess
import sys

from sqlitebus import MessageLockLostError
from tests.support.batches import Batch
from tests.support.child_env import with_repo_on_path


def test_a_send_receive_and_complete_share_one_transaction(engine):
    engine.send("work", "first", message_id="m1")
    [held] = engine.receive("work")
    before = engine._group.transactions
    results = Batch(engine._group).calls([
        lambda: engine.send("work", "second", message_id="m2"),
        lambda: engine.complete("work", held.lock_token),
        lambda: engine.send("work", "second", message_id="m2"),  # a duplicate, in the batch
    ])
    assert results == {-1: "held", 0: True, 1: None, 2: False}
    assert engine._group.transactions == before + 2
    [got] = engine.receive("work", max_count=5)
    assert (got.message_id, got.body) == ("m2", b"second")


def test_two_completes_of_one_lock_token_one_wins_the_other_lost_its_lock(engine):
    engine.send("work", "x", message_id="m1")
    [held] = engine.receive("work")
    results = Batch(engine._group).calls([
        lambda: engine.complete("work", held.lock_token),
        lambda: engine.complete("work", held.lock_token),
        lambda: engine.send("work", "y", message_id="m2"),
    ])
    assert results[0] is None and results[2] is True
    assert isinstance(results[1], MessageLockLostError)
    assert [m.message_id for m in engine.peek("work", 5)] == ["m2"]


def test_a_new_reply_queue_sent_to_in_a_rolled_back_batch_is_still_registered(engine):
    # The batch rolls back for the bad token and each operation runs again alone: the
    # reply queue's row must be written by the re-run too (its name noted only once committed).
    results = Batch(engine._group).calls([
        lambda: engine.send("replies-shop-z", "status", message_id="s1"),
        lambda: engine.complete("work", "no-such-token"),
    ])
    assert results[0] is True and isinstance(results[1], MessageLockLostError)
    assert "replies-shop-z" in [q.name for q in engine.list_queues()]
    assert [m.message_id for m in engine.receive("replies-shop-z")] == ["s1"]


def test_operation_counts_are_per_call_inside_a_batch(engine, clock):
    engine.send("work", "x", message_id="m1")
    [held] = engine.receive("work")
    before = engine._group.transactions
    results = Batch(engine._group).calls([
        lambda: engine.renew_lock("work", held.lock_token),
        lambda: engine.send("work", "y", message_id="m2"),
        lambda: engine.send("work", "z", message_id="m3"),
        lambda: engine.abandon("work", held.lock_token),
    ])
    assert results[0] == clock.now() + engine.catalog.resolve("work").lock_duration
    assert engine._group.transactions == before + 2
    counts = dict(engine._conn.execute(
        "SELECT operation, count FROM operation_counts WHERE queue = 'work'").fetchall())
    assert counts["send_calls"] == 3 and counts["sent"] == 3
    assert counts["receive_calls"] == 1 and counts["delivered"] == 1
    assert counts["lock_renewals"] == 1 and counts["abandons"] == 1
    assert [m.message_id for m in engine.receive("work", max_count=5)] == ["m1", "m2", "m3"]


def test_a_batch_writes_its_operation_counts_in_one_statement(engine):
    # The billed counts of every operation of a transaction: one upsert before its COMMIT.
    engine.send("work", "x", message_id="m1")
    [held] = engine.receive("work")
    writes = []
    engine._conn.set_trace_callback(
        lambda sql: writes.append(sql) if "INTO operation_counts" in sql else None)
    before = engine._group.transactions
    Batch(engine._group).calls([
        lambda: engine.send("work", "y", message_id="m2"),
        lambda: engine.send("other", "o", message_id="o1"),
        lambda: engine.complete("work", held.lock_token),
    ])
    # Two transactions: the holder's (it counts nothing, so writes none) and the batch's.
    assert engine._group.transactions - before == 2 and len(writes) == 1
    counts = dict(engine._conn.execute(
        "SELECT queue || ':' || operation, count FROM operation_counts").fetchall())
    assert counts == {"work:send_calls": 2, "work:sent": 2, "work:receive_calls": 1,
                      "work:delivered": 1, "work:completes": 1, "other:send_calls": 1,
                      "other:sent": 1}


# A child whose batch is killed mid-transaction: the holder lets a send, a receive and a
# complete queue behind it, and the process dies (os._exit) inside the batch's third
# operation, after the first two wrote their rows and before any COMMIT.
KILLED_MID_BATCH = r"""
import os, sys, threading
from datetime import datetime
from clocks import ManualClock
from sqlitebus import ServiceBusEngine, load_queue_catalog
from tests.support.batches import Batch

db, queues_file, start, token = sys.argv[1:5]
engine = ServiceBusEngine(
    db, catalog=load_queue_catalog(queues_file), clock=ManualClock(datetime.fromisoformat(start)))
real_complete = engine._complete
def dying_complete(queue, lock_token, conn):
    real_complete(queue, lock_token, conn)
    os._exit(9)
engine._complete = dying_complete
Batch(engine._group).calls([
    lambda: engine.send("work", "new", message_id="new-1"),
    lambda: engine.renew_lock("work", token),
    lambda: engine.complete("work", token),
])
"""


def test_a_process_killed_inside_a_batch_commits_none_of_it(engine, queues_file, clock):
    engine.send("work", "kept", message_id="kept-1")
    [held] = engine.receive("work")
    child = subprocess.run(
        [sys.executable, "-c", KILLED_MID_BATCH, str(engine.path), str(queues_file),
         clock.now().isoformat(), held.lock_token],
        env=with_repo_on_path(), capture_output=True, text=True, timeout=60)
    assert child.returncode == 9, child.stderr
    # Nothing of the batch: no new message, the lock neither renewed nor settled.
    assert [m.message_id for m in engine.peek("work", 5)] == ["kept-1"]
    assert engine.counts("work").locked == 1
    engine.complete("work", held.lock_token)
    assert engine.counts("work").active == 0
