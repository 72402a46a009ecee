"""L3: work that fails because of the host itself never loops; it ends as on Azure."""

import json
import logging
import sys
import time
from datetime import timedelta

import pytest

from clocks import SystemClock
from devhost.failures.host_failures import HOST_ERROR_REASON, HostRetryPolicy
from devhost.orchestration.sdk_errors import OUT_OF_PROC_MARKER, split_failure_text
from devhost.run.host import LocalHost
from devhost.run.runtime import build_host
from devhost.taskhub.events import EventType
from tests.devhost.conftest import SAMPLE_APP, output, start

pytestmark = pytest.mark.timeout(60)  # the defect this guards against was an endless loop

RETRIES = HostRetryPolicy(retries=3)  # pauses of 1, 2 and 4 s between the 4 attempts


@pytest.fixture
def host(tmp_path, clock):
    h = LocalHost(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False,
                  host_retries=RETRIES)
    yield h
    h.stop()


def injected(monkeypatch, target, *, times=None, only=None):
    """Make ``target`` (module path, attribute) raise; return the list of its calls."""
    module, name = target
    original = getattr(module, name)
    calls = []

    def fail(*args, **kwargs):
        if only is None or only(*args):
            calls.append(args)
            if times is None or len(calls) <= times:
                raise RuntimeError("injected host fault")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, fail)
    return calls


def errors_naming(caplog, instance_id):
    return [r for r in caplog.records
            if r.levelno == logging.ERROR and f"'{instance_id}'" in r.getMessage()]


# ---------------------------------------------------------------- the reported case

def child_id(host, parent_id, seq):
    """The default id DTFx gives a sub-orchestration: parent execution id and task id."""
    return f"{host.taskhub.get_instance(parent_id).execution_id}:{seq}"


def test_child_failure_fails_parent_at_once_naming_the_error(host, caplog):
    iid = start(host, "order_parent", None, "p1")
    steps = host.run_until_idle(max_steps=100)
    child = host.taskhub.get_instance(child_id(host, "p1", 2))
    assert child.runtime_status == "Failed"
    status, out = output(host, iid)
    assert status == "Failed"
    # The extension's texts, nested: the parent's error is the child's failure text.
    assert out.startswith("Orchestrator function 'order_parent' failed: Orchestrator function "
                          "'order_child' failed: Activity function 'check_sku' failed:  "
                          "ValueError: bad sku")
    assert steps < 20  # 2 activities, 1 child with 1 activity: a handful of episodes
    # No host warning; the app's own failed activity is its one execution line.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith("devhost") and r.name != "devhost.functions"]


def test_failures_nested_three_deep_fail_every_level(host):
    start(host, "order_grandparent", None, "g1")
    host.run_until_idle(max_steps=100)
    statuses = {i.instance_id: i.runtime_status for i in host.taskhub.query()[0]}
    parent = child_id(host, "g1", 0)
    assert statuses == {"g1": "Failed", parent: "Failed", child_id(host, parent, 2): "Failed"}
    assert "bad sku" in output(host, "g1")[1]


def test_failure_text_is_split_at_its_last_marker_whatever_it_nests():
    # The SDK's form, nested as a failed child's details reach its parent, 3 deep.
    text = "ValueError: bad sku"
    for depth in range(3):
        state = {"isDone": False, "actions": [[{"actionType": 0, "depth": depth}]],
                 "error": text}
        text = f"Sub-orchestration failed: {text}{OUT_OF_PROC_MARKER}{json.dumps(state)}"
    message, state = split_failure_text(text)
    assert state["actions"] == [[{"actionType": 0, "depth": 2}]]
    assert message.count(OUT_OF_PROC_MARKER) == 2 and "bad sku" in message
    assert split_failure_text("no marker") == ("no marker", None)
    assert split_failure_text(f"cut{OUT_OF_PROC_MARKER}{{\"isDone\": fa") == (
        f"cut{OUT_OF_PROC_MARKER}{{\"isDone\": fa", None)


# ---------------------------------------------------------------- episodes

def test_episode_failing_in_the_host_is_retried_then_fails_the_instance(
        host, clock, monkeypatch, caplog):
    from devhost.orchestration import episode

    calls = injected(monkeypatch, (episode.Episode, "context_json"))
    iid = start(host, "chain", "Ann")
    t0 = clock.now()
    host.run_until_idle(advance_clock=True, max_steps=100)
    assert len(calls) == RETRIES.attempts == 4  # no busy loop: exactly the attempts allowed
    assert clock.now() - t0 == timedelta(seconds=1 + 2 + 4)  # paused between attempts
    status, out = output(host, iid)
    assert status == "Failed"
    assert out == ("Orchestrator function 'chain' failed: The local host failed 4 times "
                   "running the episode of instance 'chain-1' (chain); last error: "
                   "RuntimeError: injected host fault")
    [completed] = [e for e in host.taskhub.get_history(iid)
                   if e["EventType"] == EventType.ExecutionCompleted]
    assert completed["OrchestrationStatus"] == "Failed"
    assert len(errors_naming(caplog, iid)) == 1
    assert host.run_until_idle(advance_clock=True) == 0  # nothing left to retry
    assert host.taskhub.host_failure_count(f"episode:{iid}") == 0


def test_a_child_the_host_fails_fails_in_its_parent_as_a_catchable_error(host, monkeypatch):
    from devhost.orchestration import episode

    calls = injected(monkeypatch, (episode.Episode, "context_json"),
                     only=lambda ep: ep.inst.instance_id != "cp")
    start(host, "catching_parent", None, "cp")
    host.run_until_idle(advance_clock=True, max_steps=100)
    assert len(calls) == 4
    status, out = output(host, "cp")
    assert status == "Completed"
    assert out["child_failed"].startswith(
        "Orchestrator function 'chain' failed: The local host failed 4 times running the "
        f"episode of instance '{child_id(host, 'cp', 0)}' (chain)")


def test_a_passing_host_fault_is_retried_and_its_count_cleared(host, monkeypatch):
    from devhost.orchestration import episode

    calls = injected(monkeypatch, (episode.Episode, "context_json"), times=2)
    iid = start(host, "chain", "Bo")
    host.run_until_idle(advance_clock=True, max_steps=100)
    assert output(host, iid) == ("Completed", [
        "Hello Bo-Tokyo!", "Hello Bo-Seattle!", "Hello Bo-London!"])
    assert len(calls) == 6  # 2 failures, then the 4 episodes of a 3-activity chain
    assert host.taskhub.host_failure_count(f"episode:{iid}") == 0


@pytest.mark.parametrize(("ending_fails_too", "attempts"), [(False, 4), (True, 5)])
def test_a_commit_the_host_cannot_write_is_a_host_failure_of_that_episode_only(
        host, monkeypatch, ending_fails_too, attempts):
    from devhost.taskhub.store import TaskHub

    def poisoned(hub, item, commit, now):
        return item.instance.instance_id == "bad" and (
            ending_fails_too or commit.status != "Failed")

    calls = injected(monkeypatch, (TaskHub, "_prepare"), only=poisoned)
    start(host, "chain", "Cy", "bad")
    start(host, "chain", "Di", "good")
    host.run_until_idle(advance_clock=True, max_steps=100)
    assert len(calls) == attempts  # with a poisoned ending, it is forced once more, no loop
    assert output(host, "bad")[0] == "Failed"
    assert "running the episode of instance 'bad'" in output(host, "bad")[1]
    assert output(host, "good")[0] == "Completed"
    assert host.run_until_idle(advance_clock=True) == 0


# ---------------------------------------------------------------- activities

def test_activity_failing_in_the_host_ends_as_a_catchable_task_failure(
        host, clock, monkeypatch, caplog):
    from devhost.workers import dispatch

    calls = injected(monkeypatch, (dispatch, "run_activity"))
    iid = start(host, "charge", True)  # catches the activity's failure
    t0 = clock.now()
    host.run_until_idle(advance_clock=True, max_steps=100)
    assert len(calls) == 4
    assert clock.now() - t0 == timedelta(seconds=7)
    status, out = output(host, iid)
    assert status == "Completed"
    assert out["caught"].startswith(
        "Activity function 'decline' failed: The local host failed 4 times running activity "
        "'decline' (task 0) of instance 'charge-1'; last error: RuntimeError: injected host "
        "fault")
    assert len(errors_naming(caplog, iid)) == 1


def test_threaded_work_loop_counts_activity_runner_crashes(tmp_path, monkeypatch):
    from devhost.workers import dispatch

    calls = injected(monkeypatch, (dispatch, "run_activity"))
    fast = HostRetryPolicy(2, timedelta(milliseconds=20), timedelta(milliseconds=40))
    host = LocalHost(SAMPLE_APP, tmp_path / "data", clock=SystemClock(), serve_http=False,
                     host_retries=fast)
    host.taskhub.create_instance("charge", "t1", "false")
    host.start()
    try:
        deadline = time.monotonic() + 30
        while host.taskhub.get_instance("t1").runtime_status != "Failed":
            assert time.monotonic() < deadline, "the instance never ended"
            time.sleep(0.01)
    finally:
        host.stop()
    assert len(calls) == 3
    assert "The local host failed 3 times running activity 'decline'" in \
        host.taskhub.get_instance("t1").output


# ---------------------------------------------------------------- Service Bus triggers

def test_message_the_host_cannot_deliver_is_dead_lettered_with_the_reason(
        tmp_path, clock, monkeypatch, caplog):
    from devhost.triggers import servicebus

    monkeypatch.setenv("DEVHOST_HOST_RETRIES", "2")
    calls = injected(monkeypatch, (servicebus, "to_function_message"))
    host = build_host(SAMPLE_APP, tmp_path / "data", clock=clock, serve_http=False,
                      queue_concurrency=1)
    try:
        host.engine.send("orders", json.dumps({"id": "q1", "name": "Q"}), message_id="m1")
        host.run_until_idle(max_steps=100)
        assert len(calls) == 3  # delivered 3 times (2 retries), then no more
        [dead] = host.engine.peek("orders", 10, dead_letter=True)
        assert dead.message_id == "m1" and dead.delivery_count == 3
        assert dead.dead_letter_reason == HOST_ERROR_REASON
        assert dead.dead_letter_error_description == (
            "The local host failed 3 times running function 'on_message' on message 'm1' of "
            "queue 'orders'; last error: RuntimeError: injected host fault")
        assert host.engine.counts("orders").active == 0
        assert host.taskhub.get_instance("q1") is None
        assert [r for r in caplog.records if r.levelno == logging.ERROR
                and "'m1'" in r.getMessage()]
    finally:
        host.stop()
    assert "function_app" in sys.modules
