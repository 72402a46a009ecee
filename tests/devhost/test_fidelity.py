"""The local host answers as Azure does, read from the extension's and DTFx's sources.

One test per kind and form of docs/fidelity.md that the orchestration side shows (the
HTTP API's forms are in tests/devhost/http_api/). Each names the source it checks.
"""

import json
import logging
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from devhost.run.host import LocalHost
from devhost.taskhub.events import EventType, parse_time

FIDELITY_APP = Path(__file__).parent / "fidelity_app"


@pytest.fixture
def fhost(tmp_path, clock):
    h = LocalHost(FIDELITY_APP, tmp_path / "data", clock=clock, serve_http=False)
    yield h
    h.stop()


def start(host, name, value=None, instance_id=None, **kwargs):
    instance_id = instance_id or f"{name}-1"
    host.taskhub.create_instance(name, instance_id, json.dumps(value), **kwargs)
    return instance_id


def result(host, instance_id):
    inst = host.taskhub.get_instance(instance_id)
    return inst.runtime_status, json.loads(inst.output) if inst.output else None


def events_of(host, instance_id, kind):
    return [e for e in host.taskhub.get_history(instance_id) if e["EventType"] == kind]


# ----------------------------------------------------------------------- failure texts
def test_a_caught_activity_failure_reads_as_the_extension_writes_it(fhost):
    # TaskActivityShim: "Activity function '<name>' failed: <friendly message>" and the
    # serialised exception; the SDK gives the orchestrator f"{Reason} \n {Details}".
    iid = start(fhost, "catch_activity")
    fhost.run_until_idle()
    status, text = result(fhost, iid)
    assert status == "Completed"
    first, second = text.split("\n")[:2]
    assert first == "Activity function 'explode' failed:  ValueError: card declined "
    # The parser apps use (azure-functions-durable-extension#2990) finds the message.
    assert json.loads(second)["Message"].split(":", 1)[1].lstrip() == "card declined"
    details = json.loads(second)
    assert details["$type"] == "System.Exception, System.Private.CoreLib"
    assert details["InnerException"]["Message"].startswith(
        "Result: Failure\nException: ValueError: card declined\nStack: ")


def test_a_caught_sub_orchestration_failure_reads_as_the_extension_writes_it(fhost):
    # OutOfProcOrchestrationShim: the child's output "Orchestrator function '<child>'
    # failed: <error>" is the parent's Reason; "Message: <error>, StackTrace: ..." Details.
    iid = start(fhost, "catch_child")
    fhost.run_until_idle()
    status, text = result(fhost, iid)
    assert status == "Completed"
    assert text.startswith("Orchestrator function 'failing_child' failed: child broke \n "
                           "Message: child broke, StackTrace: ")
    [failed] = events_of(fhost, iid, EventType.SubOrchestrationInstanceFailed)
    assert failed["Reason"] == "Orchestrator function 'failing_child' failed: child broke"


def test_an_uncaught_activity_failure_fails_the_orchestrator_with_both_texts(fhost):
    # The extension's e2e suite (PythonTestLanguageLocalizer, RethrownActivityException).
    iid = start(fhost, "flaky_chain", "uncaught")
    fhost.run_until_idle()
    status, out = result(fhost, iid)
    assert status == "Failed"
    assert out.startswith("Orchestrator function 'flaky_chain' failed: Activity function "
                          "'flaky' failed:  RuntimeError: first call of uncaught fails")


# ------------------------------------------------------- default sub-orchestration ids
def test_default_child_ids_come_from_the_parent_execution_and_task_id(fhost):
    # TaskOrchestrationContext.CreateSubOrchestrationInstanceCore: ExecutionId + ":" + id,
    # so each continue-as-new generation names a new child instead of replacing one.
    iid = start(fhost, "generations", 0)
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "Hello 2")
    children = [i for i in fhost.taskhub.query()[0] if i.parent_instance_id == iid]
    assert len(children) == 3
    assert all(c.runtime_status == "Completed" for c in children)
    last = fhost.taskhub.get_instance(iid).execution_id
    assert f"{last}:0" in {c.instance_id for c in children}
    assert all(c.instance_id.endswith(":0") and len(c.instance_id) == 34 for c in children)


def test_a_child_with_its_parents_id_is_dropped_and_the_parent_waits(fhost, caplog):
    # CallDurableTaskFunctionAsync's ArgumentException is swallowed by the shim's replay.
    caplog.set_level(logging.WARNING, logger="devhost.orchestration")
    iid = start(fhost, "own_id_child")
    fhost.run_until_idle()
    assert fhost.taskhub.get_instance(iid).runtime_status == "Running"
    assert events_of(fhost, iid, EventType.SubOrchestrationInstanceCreated) == []
    assert "must be different than the instance ID of a parent" in caplog.text


# ------------------------------------------------------------------------------ limits
def test_a_custom_status_over_16_kb_fails_the_instance_with_the_extension_text(fhost):
    # DurableOrchestrationContext.SetCustomStatus: MaxCustomStatusPayloadSizeInKB = 16,
    # measured in whole KB of UTF-16 ('"' + 8702 x + '"' is 17,408 bytes: 17 KB).
    iid = start(fhost, "big_status", 8702)
    fhost.run_until_idle()
    status, out = result(fhost, iid)
    assert status == "Failed"
    assert out == ("Orchestrator function 'big_status' failed: The UTF-16 size of the "
                   "JSON-serialized payload must not exceed 16 KB. The current payload "
                   "size is 17 KB.")
    assert fhost.taskhub.get_instance(iid).custom_status is None  # not stored
    assert events_of(fhost, iid, EventType.TaskScheduled) == []  # nothing scheduled


def test_a_custom_status_of_16_kb_is_accepted(fhost):
    iid = start(fhost, "big_status", 8701)  # 17,406 bytes: 16 KB
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "Hello status")
    assert len(json.loads(fhost.taskhub.get_instance(iid).custom_status)) == 8701


# ------------------------------------------------------------------------ retry timing
def test_no_wait_after_the_last_failed_attempt(fhost, clock):
    # DTFx RetryInterceptor (PR #661): the timer after the last attempt fires at once.
    t0 = clock.now()
    iid = start(fhost, "retry_to_the_end")
    fhost.run_until_idle(advance_clock=True)
    status, out = result(fhost, iid)
    assert status == "Completed"
    assert parse_time(out) - t0 == timedelta(seconds=60)  # one interval, not two
    timers = events_of(fhost, iid, EventType.TimerCreated)
    assert [parse_time(t["FireAt"]) - t0 for t in timers] == [timedelta(seconds=60)] * 2


# ------------------------------------------------------------------------------ context
def test_context_version_is_none_without_a_version(fhost):
    # DurableClient.StartNewAsync passes the (unset) default version: Version null.
    iid = start(fhost, "report_version")
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", {"version": None})
    [started] = events_of(fhost, iid, EventType.ExecutionStarted)
    assert started["Version"] is None


# --------------------------------------------------------------------------- name rules
def test_function_names_compare_ignoring_case(fhost):
    # FunctionName.Equals: OrdinalIgnoreCase, for the orchestrator and its activities.
    iid = start(fhost, "MIXED_CASE")
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "Hello case")
    [scheduled] = events_of(fhost, iid, EventType.TaskScheduled)
    assert scheduled["Name"] == "HELLO"  # the name as called, as DTFx records it


def test_a_call_to_an_unknown_activity_is_never_scheduled_and_the_instance_waits(
        fhost, caplog):
    # ThrowIfFunctionDoesNotExist's ArgumentException is swallowed for an out-of-process
    # orchestrator (azure-functions-durable-python#132): no TaskFailed to catch.
    caplog.set_level(logging.WARNING, logger="devhost.orchestration")
    iid = start(fhost, "misspelt")
    fhost.run_until_idle(advance_clock=True)
    assert fhost.taskhub.get_instance(iid).runtime_status == "Running"
    assert events_of(fhost, iid, EventType.TaskScheduled) == []
    assert ("call_activity('helo') is never scheduled: The function 'helo' doesn't exist, "
            "is disabled, or is not an activity function. Additional info: The following "
            "are the known activity functions:") in caplog.text


# ----------------------------------------------------------------- management semantics
def test_a_second_suspend_queued_before_the_first_ran_does_not_resuspend(fhost):
    # DTFx drops an ExecutionSuspended that reaches a suspended instance
    # (TaskOrchestrationContext.HandleEventWhileSuspended), so after resume it runs on.
    iid = start(fhost, "waiter")
    fhost.run_until_idle()
    fhost.taskhub.suspend(iid, "one")
    fhost.taskhub.suspend(iid, "two")  # both accepted: the instance was still Running
    fhost.run_until_idle()
    assert fhost.taskhub.get_instance(iid).runtime_status == "Suspended"
    fhost.taskhub.resume(iid, "go on")
    fhost.run_until_idle()
    assert fhost.taskhub.get_instance(iid).runtime_status == "Running"
    fhost.taskhub.raise_event(iid, "go", json.dumps("now"))
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", "now")


def test_rewind_runs_the_failed_activity_again_and_the_instance_completes(fhost):
    # DTFx rewind: the failed task's events are removed, the rest replays as it was.
    iid = start(fhost, "flaky_chain", "rw")
    fhost.run_until_idle()
    assert fhost.taskhub.get_instance(iid).runtime_status == "Failed"
    fhost.taskhub.rewind(iid, "fixed")
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", ["Hello before", "rw ok"])
    assert sys.modules["function_app"].FLAKY["rw"] == 2
    assert len(events_of(fhost, iid, EventType.TaskCompleted)) == 2
    assert events_of(fhost, iid, EventType.TaskFailed) == []


def test_rewind_of_a_parent_rewinds_its_failed_child(fhost):
    iid = start(fhost, "flaky_parent", "rwp")
    fhost.run_until_idle()
    assert fhost.taskhub.get_instance(iid).runtime_status == "Failed"
    fhost.taskhub.rewind(iid, "fixed")
    fhost.run_until_idle()
    assert result(fhost, iid) == ("Completed", ["Hello before", "rwp ok"])
    [child] = [i for i in fhost.taskhub.query()[0] if i.parent_instance_id == iid]
    assert child.runtime_status == "Completed"
