"""Durable actions end to end through the SDK's real orchestrator handler (drain mode)."""

import json
import logging
import re
import sys
from datetime import timedelta

from devhost.taskhub.events import EventType
from tests.devhost.conftest import output, start


def names(history):
    return [EventType(e["EventType"]).name for e in history]


def test_chain_completes_with_outputs_in_order_and_d3_history(host):
    iid = start(host, "chain", "Ann")
    host.run_until_idle()
    assert output(host, iid) == ("Completed", [
        "Hello Ann-Tokyo!", "Hello Ann-Seattle!", "Hello Ann-London!"])
    history = names(host.taskhub.get_history(iid))
    assert history == [
        "OrchestratorStarted", "ExecutionStarted", "TaskScheduled", "OrchestratorCompleted",
        "OrchestratorStarted", "TaskCompleted", "TaskScheduled", "OrchestratorCompleted",
        "OrchestratorStarted", "TaskCompleted", "TaskScheduled", "OrchestratorCompleted",
        "OrchestratorStarted", "TaskCompleted", "OrchestratorCompleted", "ExecutionCompleted",
    ]


def test_event_before_timer_cancels_timer_and_completes_at_once(host, clock):
    iid = start(host, "race", 3600)
    host.run_until_idle()
    assert output(host, iid)[0] == "Running"
    host.taskhub.raise_event(iid, "Approval", '{"ok": true}')
    t0 = clock.now()
    host.run_until_idle(advance_clock=True)
    assert output(host, iid) == ("Completed", {"outcome": "approved", "value": {"ok": True}})
    assert clock.now() == t0, "the cancelled timer must not keep the instance waiting"
    assert host.taskhub.next_due() is None


def test_timer_first_takes_timeout_branch(host, clock):
    iid = start(host, "race", 60)
    t0 = clock.now()
    host.run_until_idle(advance_clock=True)
    assert output(host, iid) == ("Completed", {"outcome": "timeout"})
    assert clock.now() - t0 == timedelta(seconds=60)
    assert "TimerFired" in names(host.taskhub.get_history(iid))


def test_retry_always_failing_runs_exactly_three_times_then_except_branch(host):
    appmod = sys.modules["function_app"]

    iid = start(host, "retrying", "always:0")
    host.run_until_idle(advance_clock=True)
    status, out = output(host, iid)
    assert status == "Completed"
    assert appmod.ATTEMPTS["always:0"] == 3
    assert "attempt 3 failed" in out["error"]
    assert out["after"] == "Hello after-failure!"


def test_retry_succeeding_on_second_try_returns_value(host):
    appmod = sys.modules["function_app"]

    iid = start(host, "retrying", "second:2")
    host.run_until_idle(advance_clock=True)
    assert output(host, iid) == ("Completed", {"value": "ok after 2"})
    assert appmod.ATTEMPTS["second:2"] == 2


def test_activity_error_is_catchable_with_its_message(host):
    iid = start(host, "charge", True)
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed"
    assert "card declined" in out["caught"]
    failed = [e for e in host.taskhub.get_history(iid) if e["EventType"] == EventType.TaskFailed]
    # The extension's texts (TaskActivityShim): the reason, then the exception as JSON.
    assert failed[0]["Reason"] == "Activity function 'decline' failed:  ValueError: card declined"
    details = json.loads(failed[0]["Details"])
    assert details["Message"] == " ValueError: card declined"
    assert "Stack: " in details["InnerException"]["Message"]


def test_a_raising_activity_logs_one_execution_line_as_core_tools_does(host, caplog):
    iid = start(host, "charge", True)
    with caplog.at_level(logging.INFO, logger="devhost"):
        host.run_until_idle()
    assert output(host, iid)[0] == "Completed"  # caught by the orchestrator, still logged
    lines = [r for r in caplog.records if r.name == "devhost.functions"
             and r.levelno >= logging.WARNING]
    assert len(lines) == 1
    assert lines[0].levelno == logging.ERROR
    assert re.fullmatch(r"Executed 'Functions\.decline' \(Failed, Id=[0-9a-f-]{36}, "
                        r"Duration=\d+ms\): ValueError: card declined", lines[0].getMessage())


def test_uncaught_activity_error_fails_instance_with_message(host):
    iid = start(host, "charge", False)
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Failed"
    assert "card declined" in out


def test_a_failed_orchestration_logs_one_line_as_the_extension_does(host, caplog):
    iid = start(host, "charge", False)
    with caplog.at_level(logging.INFO, logger="devhost"):
        host.run_until_idle()
    assert output(host, iid)[0] == "Failed"
    lines = [r.getMessage() for r in caplog.records if r.name == "devhost.functions"
             and "(Orchestrator)" in r.getMessage()]
    assert lines == [f"{iid}: Function 'charge (Orchestrator)' failed with an error. Reason: "
                     "Orchestrator function 'charge' failed: Activity function 'decline' "
                     "failed:  ValueError: card declined"]


def test_failing_sub_orchestration_raises_in_parent(host):
    iid = start(host, "parent", "fail")
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed"
    assert "card declined" in out["child_error"]


def test_parallel_sub_orchestrations_return_in_input_order(host):
    iid = start(host, "parent", "ok")
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed"
    assert out == [[f"Hello c{i}-{c}!" for c in ("Tokyo", "Seattle", "London")]
                   for i in range(3)]


def test_time_and_uuid_identical_on_every_replay(host, clock):
    iid = start(host, "deterministic")
    host.run_until_idle()
    first_out = output(host, iid)[1]
    # Replay the finished history through the SDK again, later: same values.
    clock.advance(timedelta(hours=1))
    from devhost.orchestration.episode import Episode
    from devhost.taskhub.store import OrchestrationWorkItem

    inst = host.taskhub.get_instance(iid)
    history = host.taskhub.get_history(iid)[:-2]  # drop OrchestratorCompleted/ExecCompleted
    item = OrchestrationWorkItem(inst, history, [], "replayer")
    ep = Episode(item, host.worker.handlers["deterministic"], clock.now())
    ep.new_events = []
    import json

    state = json.loads(ep.handler(ep.context_json()))
    assert state["isDone"] is True
    assert state["output"] == first_out
    assert first_out["first"][1] != first_out["second"][1]


def test_continue_as_new_five_generations_keeps_last_generation_only(host):
    iid = start(host, "counter", 1)
    host.run_until_idle()
    assert output(host, iid) == ("Completed", 5)
    history = host.taskhub.get_history(iid)
    started = [e for e in history if e["EventType"] == EventType.ExecutionStarted]
    # DTFx stores the SDK's input text as a JSON string (ContinueAsNewCore serialises it).
    assert len(started) == 1 and started[0]["Input"] == '"5"'


def test_fan_out_fan_in(host):
    iid = start(host, "fan", 200)
    host.run_until_idle()
    assert output(host, iid) == ("Completed", sum(i * i for i in range(200)))


def test_changing_the_called_activity_mid_flight_fails_as_non_deterministic(host):
    appmod = sys.modules["function_app"]
    iid = start(host, "switching")
    assert host.worker.run_episodes(1) == 1  # schedules "hello"
    appmod.SWITCH["activity"] = "square"  # the code changed under a running instance
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Failed"
    assert out.startswith("Non-Deterministic workflow detected: A previous execution of this "
                          "orchestration scheduled an activity task with sequence number 0 "
                          "named 'hello', but the current orchestration replay instead "
                          "scheduled an activity task named 'square'")


def test_sub_orchestration_with_invalid_instance_id_fails_in_the_parent(host):
    iid = start(host, "bad_child_id")
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed" and "instanceId" in out["refused"]
    assert host.taskhub.get_instance("bad/id#?") is None


def test_sys_exit_in_an_orchestrator_fails_that_instance_and_the_host_goes_on(host):
    start(host, "exits", None, "x1")
    start(host, "chain", "Ann", "c1")
    host.run_until_idle()
    inst = host.taskhub.get_instance("x1")
    assert inst.runtime_status == "Failed"
    assert "SystemExit(orchestrator called sys.exit)" in inst.output
    assert output(host, "c1")[0] == "Completed"


def test_sys_exit_in_an_activity_is_a_task_failure(host):
    start(host, "exits_in_activity", None, "q1")
    host.run_until_idle()
    inst = host.taskhub.get_instance("q1")
    assert inst.runtime_status == "Failed"
    failed = [e for e in host.taskhub.get_history("q1")
              if e["EventType"] == EventType.TaskFailed]
    assert len(failed) == 1
    assert "quitter raised SystemExit(activity called sys.exit)" in failed[0]["Reason"]
