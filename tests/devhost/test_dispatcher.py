"""The threaded host's Service Bus dispatcher: slots per function, threads, stop.

Apps whose queue functions block until the test releases them, under ``LocalHost.start``
with the system clock: the figures are counts of a state the test waits for (locked
messages, calls in progress), never of a time slept.
"""

import json
import logging
import sqlite3
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from devhost.failures.host_failures import HOST_ERROR_REASON
from devhost.run.runtime import build_host
from devhost.triggers import servicebus
from sqlitebus import MAX_DELIVERY_COUNT_EXCEEDED, open_engine
from tests.devhost.apps import write_app

WAIT_S = 60.0
"""Bound of each wait for a state (a hung host fails the test instead of hanging it)."""

APP_HEAD = '''
import asyncio
import concurrent.futures
import threading

import azure.functions as func

app = func.FunctionApp()
RELEASE = concurrent.futures.Future()
LOCK = threading.Lock()
RUNNING = {}
PEAK = {}
HANDLED = []


def _enter(kind):
    with LOCK:
        RUNNING[kind] = RUNNING.get(kind, 0) + 1
        PEAK[kind] = max(PEAK.get(kind, 0), RUNNING[kind])


def _leave(kind, msg):
    with LOCK:
        RUNNING[kind] -= 1
        HANDLED.append((msg.message_id, msg.delivery_count, threading.current_thread().name))
'''

SYNC_FUNCTION = '''

@app.service_bus_queue_trigger(arg_name="msg", queue_name="{queue}", connection="SB")
def on_{name}(msg: func.ServiceBusMessage) -> None:
    _enter("sync")
    try:
        if msg.get_body() == b"fail":
            raise RuntimeError("the function failed")
        RELEASE.result()
    finally:
        _leave("sync", msg)
'''

ASYNC_FUNCTION = '''

@app.service_bus_queue_trigger(arg_name="msg", queue_name="{queue}", connection="SB")
async def on_{name}(msg: func.ServiceBusMessage) -> None:
    _enter("async")
    try:
        if msg.get_body() == b"fail":
            raise RuntimeError("the function failed")
        await asyncio.wrap_future(RELEASE)
    finally:
        _leave("async", msg)
'''

SHARED_THREADS = {"devhost-async-worker", "lease-renewal", "sqlitekit-doorbell"}
"""Started at first use, one each: the app's async loop, the lock renewer, the engine's
doorbell listener."""


def host_thread(name):
    """True for a thread of the host's Service Bus triggers or others it could be mistaken for.

    Not the activity pool's (``activity_workers``, started as the work loop starts), nor
    one of :data:`SHARED_THREADS`.
    """
    return name not in SHARED_THREADS and not name.startswith("devhost-activity")


def queue_app(folder, *, sync=(), async_=(), calls=4, files=None):
    """Write an app with a blocking function per queue; host.json's maxConcurrentCalls."""
    text = APP_HEAD
    for n, queue in enumerate(sync):
        text += SYNC_FUNCTION.format(queue=queue, name=f"sync_{n}")
    for n, queue in enumerate(async_):
        text += ASYNC_FUNCTION.format(queue=queue, name=f"async_{n}")
    return write_app(folder, {"function_app.py": text, **(files or {})}, host_json={
        "version": "2.0", "extensions": {"serviceBus": {"maxConcurrentCalls": calls}}})


@contextmanager
def started(app_dir, data_dir, queued=()):
    """Build and start the app's host; yield it and the app module; release and stop.

    ``queued``: (queue, body, message id) of messages sent before the host starts.
    """
    host = build_host(app_dir, data_dir, serve_http=False)
    appmod = sys.modules["function_app"]
    for queue, body, message_id in queued:
        host.engine.send(queue, body, message_id=message_id)
    host.start()
    try:
        yield host, appmod
    finally:
        if not appmod.RELEASE.done():
            appmod.RELEASE.set_result(None)
        host.stop(timeout_s=WAIT_S)


def wait_until(predicate, what):
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.005)


def running(appmod, kind):
    with appmod.LOCK:
        return appmod.RUNNING.get(kind, 0)


def operation_counts(data_dir, queue):
    with sqlite3.connect(data_dir / "servicebus.sqlite") as conn:
        return dict(conn.execute("SELECT operation, count FROM operation_counts "
                                 "WHERE queue = ?", (queue,)).fetchall())


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_only_the_free_slots_messages_are_locked_in_one_receive(tmp_path, kind):
    # maxConcurrentCalls N and 3N messages: N locked (delivery count 1) by one receive of
    # N, the other 2N left unlocked for any receiver (prefetchCount 0).
    n = 3
    app_dir = queue_app(tmp_path / "app", calls=n,
                        **({"sync": ["work"]} if kind == "sync" else {"async_": ["work"]}))
    data_dir = tmp_path / "data"
    queued = [("work", "x", f"m{i}") for i in range(3 * n)]
    with started(app_dir, data_dir, queued) as (host, appmod):
        wait_until(lambda: running(appmod, kind) == n, f"{n} calls run")
        counts = host.engine.counts("work")
        assert (counts.active, counts.locked) == (3 * n, n)
        deliveries = sorted(m.delivery_count for m in host.engine.peek("work", 10 * n))
        assert deliveries == [0] * (2 * n) + [1] * n
        assert operation_counts(data_dir, "work") == {
            "send_calls": 3 * n, "sent": 3 * n, "receive_calls": 1, "delivered": n}
        other = open_engine(data_dir, catalog=host.engine.catalog)
        try:
            taken = other.receive("work", 10 * n, lock_owner="another-host")
            assert len(taken) == 2 * n
            for m in taken:
                other.abandon("work", m.lock_token)
        finally:
            other.close()
        assert running(appmod, kind) == n
        appmod.RELEASE.set_result(None)
        wait_until(lambda: len(appmod.HANDLED) == 3 * n, "every message is handled")
        wait_until(lambda: host.engine.counts("work").active == 0, "every message completes")
    assert appmod.PEAK[kind] == n
    first = sorted(d for message_id, d, _ in appmod.HANDLED)
    assert first == [1] * n + [2] * (2 * n)  # the abandoned ones: their second delivery
    assert host.engine.counts("work").dead_letter == 0


def test_the_dispatcher_does_not_read_again_what_its_round_read(tmp_path, monkeypatch):
    # Its round reads every free queue's next visible message at once and receives only
    # where one is ready: the receive's own read for an empty queue is not made again.
    from sqlitebus.engine import ServiceBusEngine

    probes = []
    probe = ServiceBusEngine._any_candidate
    monkeypatch.setattr(ServiceBusEngine, "_any_candidate",
                        lambda self, *args: probes.append(args) or probe(self, *args))
    app_dir = queue_app(tmp_path / "app", sync=["work"], calls=2)
    queued = [("work", "x", f"m{i}") for i in range(6)]
    with started(app_dir, tmp_path / "data", queued) as (host, appmod):
        appmod.RELEASE.set_result(None)
        wait_until(lambda: len(appmod.HANDLED) == 6, "every message is handled")
        receives = operation_counts(tmp_path / "data", "work")["receive_calls"]
    assert receives >= 3 and probes == []


def host_threads_started(app_dir, data_dir):
    """Return the names of the threads the host's start() added, idle."""
    before = set(threading.enumerate())
    with started(app_dir, data_dir) as (host, _):
        wait_until(lambda: host.engine.counts("q0").active == 0, "the host is up")
        return sorted(t.name for t in set(threading.enumerate()) - before if host_thread(t.name))


def test_the_hosts_threads_do_not_grow_with_queues_times_their_concurrency(tmp_path):
    one = host_threads_started(queue_app(tmp_path / "one", sync=["q0"], calls=1),
                               tmp_path / "one-data")
    queues = [f"q{i}" for i in range(5)]
    many = host_threads_started(queue_app(tmp_path / "many", sync=queues[:3],
                                          async_=queues[3:], calls=8), tmp_path / "many-data")
    assert many == one == ["devhost-servicebus", "devhost-work"]


def test_sync_and_async_functions_both_run_up_to_their_limits_at_once(tmp_path):
    n = 3
    app_dir = queue_app(tmp_path / "app", sync=["sync-work"], async_=["async-work"], calls=n)
    with started(app_dir, tmp_path / "data") as (host, appmod):
        idle = set(threading.enumerate())
        for i in range(2 * n):
            host.engine.send("sync-work", "s", message_id=f"s{i}")
            host.engine.send("async-work", "a", message_id=f"a{i}")
        wait_until(lambda: running(appmod, "sync") == n and running(appmod, "async") == n,
                   f"{n} calls of each function run")
        assert host.engine.counts("sync-work").locked == n
        assert host.engine.counts("async-work").locked == n
        # The sync calls hold a thread each; the async ones none: they share the app's
        # loop (its thread, as the lease renewer's, starts at its first use).
        new = [t.name for t in set(threading.enumerate()) - idle if host_thread(t.name)]
        assert len(new) == n, new
        appmod.RELEASE.set_result(None)
        wait_until(lambda: len(appmod.HANDLED) == 4 * n, "every message is handled")
    assert appmod.PEAK == {"sync": n, "async": n}
    loops = {thread for message_id, _, thread in appmod.HANDLED if message_id.startswith("a")}
    assert loops == {"devhost-async-worker"}


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_stop_waits_for_running_messages_and_completes_them(tmp_path, kind):
    n = 2
    app_dir = queue_app(tmp_path / "app", calls=n,
                        **({"sync": ["work"]} if kind == "sync" else {"async_": ["work"]}))
    host = build_host(app_dir, tmp_path / "data", serve_http=False)
    appmod = sys.modules["function_app"]
    host.start()
    for i in range(2 * n):
        host.engine.send("work", "x", message_id=f"m{i}")
    wait_until(lambda: running(appmod, kind) == n, f"{n} calls run")
    stopping = threading.Thread(target=host.stop, kwargs={"timeout_s": WAIT_S})
    stopping.start()
    wait_until(lambda: host.state == "Stopping", "the host is stopping")
    appmod.RELEASE.set_result(None)
    stopping.join(WAIT_S)
    assert not stopping.is_alive()
    assert len(appmod.HANDLED) == n
    counts = host.engine.counts("work")
    # The running ones completed; the others were never received, so not delivered.
    assert (counts.active, counts.locked) == (n, 0)
    assert sorted(m.delivery_count for m in host.engine.peek("work", 10)) == [0] * n


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("failure", ["function raises", "host fails"])
def test_a_failed_message_is_abandoned_then_dead_lettered_and_frees_its_slot(
        tmp_path, monkeypatch, kind, failure):
    # Abandoned at each delivery, dead-lettered at the last the queue (10) or the host's
    # retries (L3, 2 here) allow; the other slot's message and the next ones still run.
    monkeypatch.setenv("DEVHOST_HOST_RETRIES", "2")
    if failure == "host fails":
        original = servicebus.to_function_message

        def to_function_message(m):
            if m.body == b"fail":
                raise RuntimeError("injected host fault")
            return original(m)

        monkeypatch.setattr(servicebus, "to_function_message", to_function_message)
    app_dir = queue_app(tmp_path / "app", calls=2,
                        **({"sync": ["work"]} if kind == "sync" else {"async_": ["work"]}))
    with started(app_dir, tmp_path / "data") as (host, appmod):
        # "good" first, running before "bad" arrives: sent together, one receive may take
        # both and settle bad's last delivery before it hands good out.
        host.engine.send("work", "x", message_id="good")
        wait_until(lambda: running(appmod, kind) == 1, "good runs")
        host.engine.send("work", "fail", message_id="bad")
        wait_until(lambda: host.engine.counts("work").dead_letter == 1, "it is dead-lettered")
        assert running(appmod, kind) == 1  # "good", holding the other slot all along
        host.engine.send("work", "y", message_id="next")
        wait_until(lambda: running(appmod, kind) == 2, "the freed slot runs the next one")
        appmod.RELEASE.set_result(None)
        wait_until(lambda: host.engine.counts("work").active == 0, "the others complete")
    [dead] = host.engine.peek("work", 10, dead_letter=True)
    assert dead.message_id == "bad"
    if failure == "host fails":
        assert (dead.dead_letter_reason, dead.delivery_count) == (HOST_ERROR_REASON, 3)
    else:
        assert (dead.dead_letter_reason, dead.delivery_count) == (MAX_DELIVERY_COUNT_EXCEEDED, 10)
    assert sorted(message_id for message_id, _, _ in appmod.HANDLED
                  if message_id != "bad") == ["good", "next"]


def test_a_slot_freed_when_its_thread_is_idle_always_finds_a_thread():
    # Each work's `then` frees its slot and submits the next at once, as the dispatcher
    # does: one thread runs them all, never a second.
    from devhost.triggers.dispatcher import SlotPool

    pool = SlotPool(1, "slot-pool-test")
    ran, threads, done = [], set(), threading.Event()

    def work(n):
        ran.append(n)
        threads.add(threading.current_thread().name)

    def then(n):
        if n < 20:
            pool.submit(lambda: work(n + 1), lambda: then(n + 1))
        else:
            done.set()

    pool.submit(lambda: work(0), lambda: then(0))
    assert done.wait(WAIT_S)
    pool.close()
    assert ran == list(range(21)) and threads == {"slot-pool-test-0"}


def test_a_queue_the_engine_does_not_know_fails_only_its_own_function(tmp_path, caplog):
    # The app's queue catalogue declares "work" only; "missing" fails each round, logged,
    # as its poller's receive did, and "work" is served all the same.
    catalogue = {"defaults": {"lockDuration": "PT30S", "maxDeliveryCount": 3,
                              "requiresDuplicateDetection": False,
                              "duplicateDetectionHistoryTimeWindow": "PT10M",
                              "deadLetteringOnMessageExpiration": True,
                              "defaultMessageTimeToLive": "P1D"},
                 "queues": {"work": {}},
                 "clientReplyQueues": {"namePattern": "replies-{clientId}", "properties": {}}}
    app_dir = queue_app(tmp_path / "app", sync=["missing", "work"], calls=1,
                        files={"infra/queues.json": json.dumps(catalogue)})
    with started(app_dir, tmp_path / "data", [("work", "x", "w1")]) as (host, appmod):
        wait_until(lambda: running(appmod, "sync") == 1, "the message of 'work' runs")
        appmod.RELEASE.set_result(None)
        wait_until(lambda: host.engine.counts("work").active == 0, "it completes")
    assert [message_id for message_id, _, _ in appmod.HANDLED] == ["w1"]
    assert any(r.levelno == logging.ERROR and "missing" in r.getMessage()
               for r in caplog.records)
