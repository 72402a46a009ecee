"""The Service Bus dispatcher's reads: a woken round answers from a fresh read of a queue
no ring or receive has touched since, and reads again whenever one has (or time has)."""

import json
import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest

from clocks import ManualClock
from devhost.triggers import dispatcher as dispatch
from sqlitebus import ServiceBusEngine, load_queue_catalog
from tests.sqlitebus.conftest import QUEUES_DOC

WAIT_S = 60.0


def _function(msg):  # the fake function's code: a def, so its messages run on the pool
    return None  # (the fake poller's handle completes them)


@pytest.fixture
def setup(tmp_path):
    """A dispatcher of one function on 'work' (2 slots), its engine, reads and handled ids."""
    path = tmp_path / "queues.json"
    path.write_text(json.dumps(QUEUES_DOC), encoding="utf-8")
    clock = ManualClock()
    engine = ServiceBusEngine.in_data_dir(tmp_path / "data", catalog=load_queue_catalog(path),
                                          clock=clock)
    handled: list[str] = []
    poller = SimpleNamespace(fdef=SimpleNamespace(name="on_work", func=_function),
                             queue="work", engine=engine, owner="test-host",
                             handle=lambda m: (engine.complete("work", m.lock_token),
                                               handled.append(m.message_id)))
    ages = [0.0]  # the dispatcher's monotonic seconds: a read ages only when a test says so
    d = dispatch.ServiceBusDispatcher([poller, poller], clock, monotonic=lambda: ages[0])
    key = engine.add_waker(d._by_queue, d._rung)  # as run() does
    reads: list[set[str]] = []
    read = engine.next_visible_of
    engine.next_visible_of = lambda queues: reads.append(set(queues)) or read(queues)
    yield SimpleNamespace(d=d, engine=engine, clock=clock, reads=reads, handled=handled,
                          ages=ages)
    engine.remove_waker(key)
    d.wind_down(time.monotonic() + WAIT_S)
    engine.close()


def settled(s):
    deadline = time.monotonic() + WAIT_S
    while s.d.in_hand():
        assert time.monotonic() < deadline, "the handed-out messages never ended"
        time.sleep(0.001)


def test_a_woken_round_reads_only_what_a_ring_a_receive_or_time_changed(setup):
    s = setup
    assert s.d.run_round() == (0, None) and len(s.reads) == 1  # a poll always reads
    assert s.d.run_round(trust_seen=True) == (0, None) and len(s.reads) == 1  # nothing new
    s.engine.send("work", b"a", message_id="a")  # rings: read again, and receive it
    assert s.d.run_round(trust_seen=True)[0] == 1 and len(s.reads) == 2
    settled(s)
    assert s.handled == ["a"]
    # The receive forgot the queue: the next round reads what it left.
    assert s.d.run_round(trust_seen=True) == (0, None) and len(s.reads) == 3
    later = s.clock.now() + timedelta(seconds=5)
    s.engine.send("work", b"b", message_id="b", scheduled_enqueue_time=later)
    assert s.d.run_round(trust_seen=True) == (0, later) and len(s.reads) == 4
    assert s.d.run_round(trust_seen=True) == (0, later) and len(s.reads) == 4  # not due yet
    s.clock.advance(timedelta(seconds=5))  # due now: read, and receive it
    assert s.d.run_round(trust_seen=True)[0] == 1 and len(s.reads) == 5
    settled(s)
    assert s.handled == ["a", "b"]


def test_a_ring_lost_between_processes_is_found_once_the_read_is_stale(setup, monkeypatch):
    s = setup
    other = ServiceBusEngine(s.engine.path, catalog=s.engine.catalog, clock=s.clock)
    try:
        monkeypatch.setattr(other._doorbell, "ring", lambda _name: None)  # a dropped ring
        s.d.run_round()
        other.send("work", b"c", message_id="c")
        s.ages[0] += dispatch.FRESH_S  # as old as FRESH_S: still fresh, answers from the read
        assert s.d.run_round(trust_seen=True) == (0, None) and len(s.reads) == 1
        s.ages[0] += 0.001  # older than FRESH_S: read again, and receive it
        assert s.d.run_round(trust_seen=True)[0] == 1 and len(s.reads) == 2
        settled(s)
        assert s.handled == ["c"]
    finally:
        other.close()


def test_the_thread_polls_a_wait_that_ran_out_and_trusts_a_woken_one(setup):
    # run(): the round after an idle wait that timed out reads; one after a wake may not.
    s = setup
    stop = threading.Event()
    thread = threading.Thread(target=s.d.run, args=(stop, time.monotonic))
    thread.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while len(s.reads) < 3:  # idle: its waits run out and each next round polls
            assert time.monotonic() < deadline
            time.sleep(0.001)
        s.engine.send("work", b"d", message_id="d")
        while s.handled != ["d"]:
            assert time.monotonic() < deadline
            time.sleep(0.001)
    finally:
        stop.set()
        s.d.wake()
        thread.join(WAIT_S)
    assert not thread.is_alive()
