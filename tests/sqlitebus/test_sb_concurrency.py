"""Concurrent receivers on one file: threads, processes, and a receiver killed mid-lock.

Receivers run in lock-step rounds: in every round all of them call receive at the same
moment and race for the same head of the queue, so each round exercises the IMMEDIATE
transaction that must give every message to exactly one of them.
"""

import json
import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta

import pytest

from sqlitebus import NewMessage, ServiceBusEngine
from tests.support.child_env import with_repo_on_path

TOTAL = 500
BATCH = 5
LOCK = timedelta(seconds=30)

# Runs in a separate interpreter with its own engine on the shared file. Every process uses
# a ManualClock at the same instant, so no lock expires while they run.
WORKER = r"""
import json, os, sys
from datetime import datetime
from clocks import ManualClock
from sqlitebus import ServiceBusEngine, load_queue_catalog

db, queues_file, start, mode, batch = sys.argv[1:6]
engine = ServiceBusEngine(
    db, catalog=load_queue_catalog(queues_file), clock=ManualClock(datetime.fromisoformat(start))
)
if mode == "drain":
    seen = []
    print("ready", flush=True)
    while sys.stdin.readline().strip() == "go":  # one round per line
        messages = engine.receive("work", int(batch), f"pid-{os.getpid()}")
        for message in messages:
            seen.append([message.message_id, message.delivery_count])
            engine.complete("work", message.lock_token)
        print(len(messages), flush=True)
    print(json.dumps(seen), flush=True)
else:  # hold: take locks, report them, then wait to be killed
    messages = engine.receive("work", int(batch), "doomed")
    print(json.dumps([m.message_id for m in messages]), flush=True)
    sys.stdin.readline()
"""


def _fill(engine, count=TOTAL):
    batch = [NewMessage(f"body-{i}", message_id=f"m-{i:04d}") for i in range(count)]
    assert all(engine.send_many("work", batch))


def _spawn(engine, queues_file, clock, mode, batch):
    env = with_repo_on_path()
    args = [str(engine.path), str(queues_file), clock.now().isoformat(), mode, str(batch)]
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _assert_each_delivered_once(deliveries, engine):
    ids = Counter(message_id for message_id, _ in deliveries)
    assert len(ids) == TOTAL
    assert [mid for mid, n in ids.items() if n > 1] == []
    assert {count for _, count in deliveries} == {1}
    counts = engine.counts("work")
    assert (counts.active, counts.locked, counts.dead_letter) == (0, 0, 0)


@pytest.mark.parametrize("shared_engine", [False, True], ids=["own-connection", "shared"])
def test_two_threads_receive_each_message_exactly_once(engine, catalog, clock, shared_engine):
    _fill(engine)
    deliveries: list[tuple[str, int]] = []
    record = threading.Lock()
    rounds = threading.Barrier(2, timeout=60)
    got = [0, 0]
    errors: list[BaseException] = []

    def drain(index):
        own = (
            engine if shared_engine else ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
        )
        try:
            while True:
                rounds.wait()  # both receive at once
                messages = own.receive("work", BATCH, f"t{index}")
                for message in messages:
                    own.complete("work", message.lock_token)
                with record:
                    deliveries.extend((m.message_id, m.delivery_count) for m in messages)
                got[index] = len(messages)
                rounds.wait()  # both finished the round
                if not any(got):
                    break
        except BaseException as exc:  # surfaced by the main thread below
            errors.append(exc)
            rounds.abort()
        finally:
            if own is not engine:
                own.close()

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    _assert_each_delivered_once(deliveries, engine)


@pytest.mark.slow
def test_two_processes_receive_each_message_exactly_once(engine, queues_file, clock):
    _fill(engine)
    workers = [_spawn(engine, queues_file, clock, "drain", BATCH) for _ in range(2)]
    try:
        for worker in workers:
            assert worker.stdout.readline().strip() == "ready"
        while True:
            for worker in workers:  # start the round in both before reading either
                worker.stdin.write("go\n")
                worker.stdin.flush()
            if not any([int(worker.stdout.readline()) for worker in workers]):
                break
        deliveries = []
        for worker in workers:
            out, _ = worker.communicate("stop\n", timeout=60)
            assert worker.returncode == 0
            deliveries.extend(tuple(item) for item in json.loads(out))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    _assert_each_delivered_once(deliveries, engine)


@pytest.mark.slow
def test_killed_receiver_loses_nothing(engine, queues_file, clock):
    _fill(engine, 10)
    doomed = _spawn(engine, queues_file, clock, "hold", 3)
    held = json.loads(doomed.stdout.readline())
    assert held == ["m-0000", "m-0001", "m-0002"]
    doomed.kill()  # SIGKILL while holding three locks
    doomed.communicate(timeout=30)  # reap it and close its pipes

    rest = engine.receive("work", 20, "survivor")
    assert [m.message_id for m in rest] == [f"m-{i:04d}" for i in range(3, 10)]
    for message in rest:
        engine.complete("work", message.lock_token)
    clock.advance(LOCK)  # the dead process's locks expire
    redelivered = engine.receive("work", 20, "survivor")
    assert [(m.message_id, m.delivery_count) for m in redelivered] == [
        ("m-0000", 2),
        ("m-0001", 2),
        ("m-0002", 2),
    ]
