"""A send wakes a receiver waiting in another engine instance or process at once.

``wait_for_send`` returns True only when woken; its timeout (WAIT_S) is far longer than a
wake takes, so a True proves the wake and a missing wake fails the test when it runs out.
"""

import subprocess
import sys
import threading

import pytest

from sqlitebus import NewMessage, ServiceBusEngine
from sqlitekit import doorbell
from tests.support.child_env import with_repo_on_path

pytestmark = pytest.mark.skipif(not doorbell.SUPPORTED, reason="the doorbell is Linux only")

WAIT_S = 30.0

WAITER = r"""
import sys
from sqlitebus import ServiceBusEngine, load_queue_catalog

db, queues_file, queue = sys.argv[1:4]
engine = ServiceBusEngine(db, catalog=load_queue_catalog(queues_file))
mark = engine.send_mark(queue)
engine.listen()  # what the first wait does, before "ready" is said
print("ready", flush=True)
woken = engine.wait_for_send(queue, mark, float(sys.argv[4]))
print("woken" if woken else "timed out", flush=True)
print(len(engine.receive(queue, 1, "waiter")), flush=True)
"""


def _waiter(engine, queues_file, queue):
    return subprocess.Popen(
        [sys.executable, "-c", WAITER, str(engine.path), str(queues_file), queue, str(WAIT_S)],
        stdout=subprocess.PIPE, text=True, env=with_repo_on_path())


def test_a_send_of_another_process_wakes_a_waiting_receiver_which_gets_the_message(
        engine, catalog, queues_file):
    sender = ServiceBusEngine(engine.path, catalog=catalog)  # the waiter's clock: the system's
    waiter = _waiter(engine, queues_file, "work")
    try:
        assert waiter.stdout.readline().strip() == "ready"
        sender.send_many("work", [NewMessage("hello", message_id="m-1")])
        out, _ = waiter.communicate(timeout=WAIT_S + 30)
    finally:
        waiter.kill()
        sender.close()
    assert out.split() == ["woken", "1"]


def test_a_send_of_another_engine_instance_wakes_only_the_waiters_of_its_queue(
        tmp_path, catalog, clock, engine):
    other = ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
    results = {}

    def wait(queue):
        results[queue] = other.wait_for_send(queue, other.send_mark(queue), WAIT_S)

    other.listen()
    waiters = [threading.Thread(target=wait, args=(q,)) for q in ("work", "other")]
    try:
        for thread in waiters:
            thread.start()
        engine.send_many("work", [NewMessage("hello", message_id="m-1")])
        waiters[0].join(WAIT_S + 10)
        assert results == {"work": True}  # "other" still waits
        engine.send_many("other", [NewMessage("hello", message_id="m-2")])
        waiters[1].join(WAIT_S + 10)
        assert results == {"work": True, "other": True}
    finally:
        other.close()


def test_a_duplicate_send_wakes_no_one(tmp_path, catalog, clock, engine):
    other = ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
    engine.send_many("work", [NewMessage("hello", message_id="m-1")])
    other.listen()
    mark = other.send_mark("work")
    try:
        assert engine.send_many("work", [NewMessage("hello", message_id="m-1")]) == [False]
        # No ring for a send that made nothing receivable: the short wait runs out.
        assert other.wait_for_send("work", mark, 0.2) is False
    finally:
        other.close()


def test_a_send_whose_doorbell_cannot_be_rung_returns_and_is_sent_once(engine):
    # The ring follows the commit: it must not turn a made send into an error.
    registry = engine.path.with_name(engine.path.name + ".doorbell")
    registry.write_text("not a folder")
    assert engine.send_many("work", [NewMessage("hello", message_id="m-1")]) == [True]
    assert len(engine.receive("work", 10, "test")) == 1


def test_a_stray_datagram_naming_no_waited_queue_wakes_and_keeps_nothing(
        tmp_path, catalog, clock, engine):
    other = ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
    other.listen()
    try:
        other._rung("no-such-queue")  # what the doorbell thread does for any datagram
        other._rung("replies-stranger")  # a name the reply queue pattern admits, never used
        other._rung("\ufffd\ufffd")  # undecodable bytes, replaced
        assert other._send_marks == {}
        mark = other.send_mark("work")
        waiter = threading.Thread(target=lambda: results.append(
            other.wait_for_send("work", mark, WAIT_S)))
        results: list[bool] = []
        waiter.start()
        engine.send_many("work", [NewMessage("hello", message_id="m-1")])
        waiter.join(WAIT_S + 10)
        assert results == [True]
    finally:
        other.close()
