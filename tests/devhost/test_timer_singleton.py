"""L2: a timer function runs once at a time across host processes (drain mode)."""

from datetime import UTC, datetime, timedelta

import pytest

from clocks import ManualClock
from devhost.app.loader import FunctionDef
from devhost.taskhub.store import TaskHub
from devhost.triggers.timer import (
    DEFAULT_LOCK_PERIOD,
    TimerTriggerPoller,
    singleton_lock_period,
)

T0 = datetime(2030, 1, 1, tzinfo=UTC)
EVERY_SECOND = "*/1 * * * * *"
LOCK = timedelta(seconds=15)


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def hub(tmp_path, clock):
    return TaskHub(tmp_path / "taskhub.sqlite", clock, synchronous="NORMAL")


def two_processes(hub, clock, run_s):
    """Two pollers (as two host processes) of one timer function taking ``run_s``."""
    runs, pollers = [], {}

    def tick(timer):
        start = clock.now()
        # Halfway through, the other process polls: it must pass over this occurrence.
        clock.advance(timedelta(seconds=run_s / 2))
        for poller in pollers.values():  # this process's own poller included
            assert poller.poll_once() == 0
        clock.advance(timedelta(seconds=run_s / 2))
        runs.append((start, clock.now()))

    fdef = FunctionDef("tick", tick, {"schedule": EVERY_SECOND}, "timer")
    for owner in ("a", "b"):
        pollers[owner] = TimerTriggerPoller([fdef], hub, owner, lambda: None, LOCK)
    return pollers, runs


def drive(clock, pollers, until):
    while (due := min(p.next_due() for p in pollers.values())) <= until:
        clock.set(max(due, clock.now()))
        for poller in pollers.values():
            poller.poll_once()


def test_runs_longer_than_the_interval_never_overlap_and_delay_the_next(hub, clock):
    pollers, runs = two_processes(hub, clock, run_s=2.5)
    drive(clock, pollers, until=T0 + timedelta(seconds=10))
    seconds = [((s - T0).total_seconds(), (e - T0).total_seconds()) for s, e in runs]
    # Each run starts at the first occurrence after the previous one ended.
    assert seconds == [(1, 3.5), (4, 6.5), (7, 9.5), (10, 12.5)]


def test_runs_shorter_than_the_interval_take_every_occurrence_once(hub, clock):
    pollers, runs = two_processes(hub, clock, run_s=0.5)
    drive(clock, pollers, until=T0 + timedelta(seconds=5))
    assert [(s - T0).total_seconds() for s, _ in runs] == [1, 2, 3, 4, 5]


def test_a_crashed_holders_lock_expires_and_the_next_occurrence_runs_elsewhere(hub, clock):
    ran = []
    fdef = FunctionDef("tick", lambda timer: ran.append(clock.now()),
                       {"schedule": EVERY_SECOND}, "timer")
    survivor = TimerTriggerPoller([fdef], hub, "b", lambda: None, LOCK)
    # Process "a" took the lock for the occurrence at T0+1s and died mid-run.
    assert hub.begin_timer_run("tick", "a", T0 + timedelta(seconds=1), LOCK) == "run"
    for second in range(1, 20):
        clock.set(T0 + timedelta(seconds=second))
        survivor.poll_once()
    # The lock (taken at T0 for 15 s, never renewed) is free from T0+15s on.
    assert ran == [T0 + timedelta(seconds=s) for s in range(15, 20)]


def test_the_lock_is_renewed_while_running_and_a_lost_one_is_reported(hub, clock):
    due = T0 + timedelta(seconds=1)
    assert hub.begin_timer_run("tick", "a", due, LOCK) == "run"
    clock.advance(timedelta(seconds=10))
    assert hub.renew_timer_run("tick", "a", LOCK)  # holds until T0+25s now
    clock.advance(timedelta(seconds=10))
    assert hub.begin_timer_run("tick", "b", due + timedelta(seconds=19), LOCK) == "busy"
    clock.advance(timedelta(seconds=6))  # a stalled past its renewed lock
    assert hub.begin_timer_run("tick", "b", due + timedelta(seconds=25), LOCK) == "run"
    assert not hub.renew_timer_run("tick", "a", LOCK)
    assert not hub.end_timer_run("tick", "a", clock.now())
    assert hub.end_timer_run("tick", "b", clock.now())
    assert hub.begin_timer_run("tick", "a", due + timedelta(seconds=25), LOCK) == "passed"


def test_lock_period_comes_from_host_json_singleton_section(tmp_path):
    assert singleton_lock_period(tmp_path) == DEFAULT_LOCK_PERIOD == timedelta(seconds=15)
    (tmp_path / "host.json").write_text('{"singleton": {"lockPeriod": "00:00:01.5"}}')
    assert singleton_lock_period(tmp_path) == timedelta(seconds=1.5)
    (tmp_path / "host.json").write_text('{"singleton": {"lockPeriod": "15 seconds"}}')
    with pytest.raises(ValueError, match="singleton.lockPeriod.*'15 seconds'"):
        singleton_lock_period(tmp_path)
