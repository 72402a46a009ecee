from datetime import UTC, datetime

from clocks import ManualClock
from devhost.http_api import history_events_json, history_table
from devhost.taskhub.events import EventType, event
from tests.devhost.http_api.helpers import canned_history

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def history():
    clock = ManualClock(T0)
    started = event(EventType.ExecutionStarted, clock.now(), Name="Hello",
                    Input='{"city": "Tokyo"}', Version="", ParentInstance=None)
    return canned_history(clock, started)


def test_history_table_has_one_row_per_event_with_names_resolved():
    rows = history_table(history())
    assert [r["event_type"] for r in rows] == [
        "ExecutionStarted", "OrchestratorStarted", "TaskScheduled", "OrchestratorCompleted",
        "OrchestratorStarted", "TaskCompleted", "TimerCreated", "OrchestratorCompleted",
        "OrchestratorStarted", "TimerFired", "EventRaised", "TaskScheduled",
        "OrchestratorCompleted", "OrchestratorStarted", "TaskFailed", "OrchestratorCompleted",
        "ExecutionCompleted"]
    assert rows[0] == {"event_type": "ExecutionStarted", "timestamp": "2030-01-01T00:00:00.000000Z",
                       "name": "Hello", "input": '{"city": "Tokyo"}', "result": None}
    assert rows[5] == {"event_type": "TaskCompleted", "timestamp": "2030-01-01T00:00:04.000000Z",
                       "name": "SayHello", "input": '"Tokyo"', "result": '"Hello Tokyo!"'}
    assert rows[6]["input"] == rows[9]["input"] == "2030-01-01T01:00:00.000000Z"
    assert (rows[10]["name"], rows[10]["input"]) == ("Approval", '{"ok": true}')
    assert (rows[14]["name"], rows[14]["input"], rows[14]["result"]) == \
        ("Charge", '{"amount": 5}', "card declined")
    assert rows[16]["result"] == '["Hello Tokyo!"]'
    assert rows[1] == {"event_type": "OrchestratorStarted",
                       "timestamp": "2030-01-01T00:00:00.000000Z", "name": None, "input": None,
                       "result": None}


def test_history_table_of_control_events_and_unknown_types():
    rows = history_table([
        event(EventType.ExecutionSuspended, T0, Reason="maintenance"),
        event(EventType.ExecutionTerminated, T0, Input='"operator"'),
        {"EventType": 99, "Timestamp": "t"},
    ])
    assert [(r["event_type"], r["input"]) for r in rows] == [
        ("ExecutionSuspended", "maintenance"), ("ExecutionTerminated", '"operator"'),
        ("99", None)]


def test_pending_task_keeps_its_task_scheduled_event():
    events = [event(EventType.TaskScheduled, T0, 0, Name="Slow", Input="1")]
    assert history_events_json(events) == [
        {"EventType": "TaskScheduled", "Timestamp": "2030-01-01T00:00:00.000000Z",
         "Name": "Slow", "Input": 1}]


def test_sub_orchestration_completion_is_folded_with_its_creation():
    events = [
        event(EventType.SubOrchestrationInstanceCreated, T0, 3, Name="Child", InstanceId="c1",
              Input='"x"'),
        event(EventType.SubOrchestrationInstanceCompleted, T0, TaskScheduledId=3,
              Result='{"ok": 1}'),
    ]
    assert history_events_json(events, show_output=True) == [
        {"EventType": "SubOrchestrationInstanceCompleted",
         "Timestamp": "2030-01-01T00:00:00.000000Z", "FunctionName": "Child",
         "ScheduledTime": "2030-01-01T00:00:00.000000Z", "Input": "x", "Result": {"ok": 1}}]
    assert history_table(events)[1]["name"] == "Child"
