"""One waiter for several queues: wakers, and the next visible time of several queues."""

import threading
from datetime import timedelta

import pytest

from sqlitebus import ServiceBusEngine
from sqlitekit import doorbell

WAIT_S = 30.0


def test_a_waker_hears_sends_and_abandons_of_its_queues_only(engine):
    heard = []
    key = engine.add_waker(["Work", "no-dedup"], heard.append)
    engine.send("work", "a", message_id="m1")
    engine.send("other", "b", message_id="m2")
    engine.send("no-dedup", "c", message_id="m3")
    [held] = engine.receive("work")
    engine.abandon("work", held.lock_token)
    assert heard == ["work", "no-dedup", "work"]
    engine.remove_waker(key)
    engine.send("work", "d", message_id="m4")
    assert heard == ["work", "no-dedup", "work"]
    engine.remove_waker(key)  # unknown now: ignored


@pytest.mark.skipif(not doorbell.SUPPORTED, reason="the doorbell is Linux only")
def test_a_send_of_another_engine_instance_wakes_the_waker(engine, catalog, clock):
    other = ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
    woken = threading.Event()
    engine.add_waker(["work", "other"], lambda queue: woken.set())
    try:
        other.send("other", "x", message_id="m1")
        assert woken.wait(WAIT_S)
    finally:
        other.close()


def test_next_visible_of_several_queues_in_one_read(engine, clock):
    now = clock.now()
    engine.send("work", "a", message_id="m1", scheduled_enqueue_time=now + timedelta(seconds=5))
    engine.send("work", "b", message_id="m2", scheduled_enqueue_time=now + timedelta(seconds=9))
    engine.send("other", "c", message_id="m3")
    [held] = engine.receive("other", lock_owner="me")
    statements = []
    engine._conn.set_trace_callback(statements.append)
    found = engine.next_visible_of(["Work", "other", "no-dedup"])
    engine._conn.set_trace_callback(None)
    assert found == {"Work": now + timedelta(seconds=5), "other": held.locked_until}
    assert len(statements) == 1
    assert engine.next_visible("other") == held.locked_until
    assert engine.next_visible("no-dedup") is None
    assert engine.next_visible_of([]) == {}
