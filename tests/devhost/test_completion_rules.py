"""When an instance ends: as the extension's out-of-process shim and DTFx's executor decide.

Sources (extension 3.5.0, DurableTask.Core 3.4.0; devhost/orchestration/shim.py cites the
files): ``OutOfProcOrchestrationShim.ProcessAsyncActionsV2`` awaits each action in order
and swallows, but waits for, an awaited task's failure; ``TaskOrchestrationExecutor.ExecuteCore``
ends an instance only when no task is open (the "Timers" article's warning,
azure-functions-durable-python #354 and #573, azure-functions-durable-extension #653).
"""

import json
import logging
from datetime import timedelta

import pytest

from devhost.run.host import LocalHost
from devhost.taskhub.events import EventType
from tests.devhost.test_fidelity import FIDELITY_APP, events_of, result, start

SHIM_LOG = "devhost.orchestration"


@pytest.fixture
def fhost(tmp_path, clock):
    h = LocalHost(FIDELITY_APP, tmp_path / "data", clock=clock, serve_http=False)
    yield h
    h.stop()


def status(host, iid):
    return host.taskhub.get_instance(iid).runtime_status


def release_child(host, iid):
    host.taskhub.raise_event(f"{iid}:slow", "go", json.dumps("done"))
    host.run_until_idle()


def test_a_task_any_loser_keeps_the_instance_running_until_it_ends(fhost):
    iid = start(fhost, "any_of_two")
    fhost.run_until_idle()
    # The activity won and the code returned; the sub-orchestration is still open.
    assert status(fhost, iid) == "Running"
    assert fhost.taskhub.get_instance(iid).output is None
    release_child(fhost, iid)
    assert result(fhost, iid) == ("Completed", "Hello fast")


def test_an_uncancelled_timer_keeps_the_instance_running_until_it_fires(fhost, clock, caplog):
    caplog.set_level(logging.WARNING, logger=SHIM_LOG)
    iid = start(fhost, "event_or_timer", "keep")
    fhost.run_until_idle()
    fhost.taskhub.raise_event(iid, "approve", json.dumps(True))
    fhost.run_until_idle()
    assert status(fhost, iid) == "Running"
    warnings = [r.getMessage() for r in caplog.records if "stays Running" in r.getMessage()]
    assert len(warnings) == 1
    assert "the timer firing at" in warnings[0] and "(task 0)" in warnings[0]
    assert f"instance '{iid}'" in warnings[0]
    clock.advance(timedelta(hours=1))
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "approved")
    assert len([r for r in caplog.records if "stays Running" in r.getMessage()]) == 1


def test_a_cancelled_timer_lets_the_instance_complete_at_once(fhost, caplog):
    caplog.set_level(logging.WARNING, logger=SHIM_LOG)
    iid = start(fhost, "event_or_timer", "cancel")
    fhost.run_until_idle()
    fhost.taskhub.raise_event(iid, "approve", json.dumps(True))
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "approved")
    assert "stays Running" not in caplog.text


def test_an_uncaught_task_all_failure_fails_the_instance_when_every_sibling_ended(fhost):
    iid = start(fhost, "all_fails_early")
    fhost.run_until_idle()
    assert status(fhost, iid) == "Running"  # Task.WhenAll waits for the child
    release_child(fhost, iid)
    state, output = result(fhost, iid)
    assert state == "Failed"
    assert output.startswith("Orchestrator function 'all_fails_early' failed: Activity "
                             "function 'explode' failed:  ValueError: card early")


def test_a_caught_task_all_failure_runs_the_next_call_when_every_sibling_ended(fhost):
    iid = start(fhost, "all_fails_early_caught")
    fhost.run_until_idle()
    scheduled = [e["Input"] for e in events_of(fhost, iid, EventType.TaskScheduled)]
    assert scheduled == [json.dumps("early")]  # "after" waits for the awaited WhenAll
    assert status(fhost, iid) == "Running"
    release_child(fhost, iid)
    assert result(fhost, iid) == ("Completed", "Hello after")
    scheduled = [e["Input"] for e in events_of(fhost, iid, EventType.TaskScheduled)]
    assert scheduled == [json.dumps("early"), json.dumps("after")]


@pytest.mark.parametrize("name", ["any_of_two", "all_fails_early"])
def test_the_open_task_is_named_once_in_a_warning(fhost, caplog, name):
    caplog.set_level(logging.WARNING, logger=SHIM_LOG)
    start(fhost, name)
    fhost.run_until_idle()
    fhost.run_until_idle()
    warnings = [r.getMessage() for r in caplog.records if "stays Running" in r.getMessage()]
    assert len(warnings) == 1
    assert "sub-orchestration 'waiter'" in warnings[0]


def test_a_timer_raced_again_is_left_out_of_the_second_race_which_then_waits(fhost, clock,
                                                                               caplog):
    # The SDK's CompoundTask leaves an already scheduled child out of the WhenAny action, so
    # the shim's second Task.WhenAny holds only the wait for "b": when the timer fires the
    # code returns, yet the awaited WhenAny stays open until "b" arrives.
    caplog.set_level(logging.WARNING, logger=SHIM_LOG)
    iid = start(fhost, "one_timer_two_races")
    fhost.run_until_idle()
    fhost.taskhub.raise_event(iid, "a", json.dumps(1))
    fhost.run_until_idle()
    clock.advance(timedelta(hours=1))
    fhost.run_until_idle()
    assert status(fhost, iid) == "Running"
    assert "stays Running while external event 'b' is open" in caplog.text
    fhost.taskhub.raise_event(iid, "b", json.dumps(2))
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "deadline")
