"""One order's detail: attempts as timelines, an unreadable history shown on its attempt."""

import json
from types import SimpleNamespace

import pytest

from ops.dashboard.detail import (
    DetailRequestError,
    order_detail,
    resolve_key,
    sent_by_attempts,
    status_json,
    timeline,
)
from orders.models import ProcessState
from tests.support.records import record_in

EVENTS = [
    {"EventType": "ExecutionStarted", "Timestamp": "t0", "Name": "order_workflow",
     "Input": {"attempt": 1}},
    {"EventType": "TaskCompleted", "Timestamp": "t1", "FunctionName": "publish_status",
     "Input": {"status": "OrderCompleted"}, "Result": None},
    {"EventType": "TaskFailed", "Timestamp": "t2", "FunctionName": "load_order",
     "Reason": "no order", "Details": "KeyError"},
]


def test_history_events_become_timeline_rows():
    assert timeline({"historyEvents": EVENTS}) == [
        {"type": "ExecutionStarted", "time": "t0", "name": "order_workflow",
         "input": {"attempt": 1}, "result": None},
        {"type": "TaskCompleted", "time": "t1", "name": "publish_status",
         "input": {"status": "OrderCompleted"}, "result": None},
        {"type": "TaskFailed", "time": "t2", "name": "load_order", "input": None,
         "result": {"Reason": "no order", "Details": "KeyError"}}]
    assert timeline(None) == []


def test_an_input_wrapped_in_its_trace_context_shows_as_the_activity_own_input():
    wrapped = {"traceParent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
               "instanceId": "shop-a~7:1", "input": {"status": "OrderCompleted"}}
    [row] = timeline({"historyEvents": [{**EVENTS[1], "Input": wrapped}]})
    assert row["input"] == {"status": "OrderCompleted"}


def test_the_sdk_status_keeps_its_history_and_an_unknown_instance_is_none():
    class Status(SimpleNamespace):
        def __bool__(self):
            return True

        def to_json(self):
            return {"runtimeStatus": "Completed", "history": None}

    status = Status(historyEvents=EVENTS)
    assert status_json(status) == {"runtimeStatus": "Completed", "historyEvents": EVENTS}
    assert status_json(None) is None


def test_an_attempt_whose_history_cannot_be_read_says_so_and_the_others_show(services):
    record_in(services.stores.states, services.clock, ProcessState.PROCESSED, attempt=2,
              locked_by="ORD-1:2", complete_by=None)
    detail = order_detail(services, "ORD-1", {
        "ORD-1:1": ConnectionError("host unreachable"),
        "ORD-1:2": {"runtimeStatus": "Completed", "historyEvents": EVENTS}})
    first, second = detail["attempts"]
    assert (first["status"], first["error"], first["timeline"]) == (None, "host unreachable", [])
    assert second["status"] == {"runtimeStatus": "Completed"} and len(second["timeline"]) == 3
    assert detail["sentByAttempts"] == [{"instanceId": "ORD-1:2", "at": "t1",
                                         "status": "OrderCompleted", "reason": None}]
    assert order_detail(services, "ORD-2", {}) is None


@pytest.mark.parametrize("client, order_id, key", [
    ("acme", "ORD-1", "acme~ORD-1"), (None, "acme~ORD-1", "acme~ORD-1"), (None, "ORD-1", "ORD-1")])
def test_orders_are_named_by_client_and_order_id_or_by_key(client, order_id, key):
    assert resolve_key(client, order_id) == key


@pytest.mark.parametrize("client, order_id", [("acme", "a b"), ("ac~me", "ORD-1"),
                                              (None, "<b>")])
def test_malformed_names_are_refused(client, order_id):
    with pytest.raises(DetailRequestError):
        resolve_key(client, order_id)


def test_a_version_3_finish_attempt_counts_as_sending_order_completed_unless_fenced():
    def finish(fenced, reply_to="replies-acme"):
        given = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Processed"}
        return {"type": "TaskCompleted", "time": "t2", "name": "finish_attempt",
                "input": {**given, "replyTo": reply_to} if reply_to else given,
                "result": json.dumps({"fenced": fenced})}

    attempts = [{"instanceId": "ORD-1:1", "timeline": [finish(False)]},
                {"instanceId": "ORD-1:2", "timeline": [finish(True)]},
                {"instanceId": "ORD-1:3", "timeline": [finish(False, reply_to=None)]}]
    assert sent_by_attempts(attempts) == [{"instanceId": "ORD-1:1", "at": "t2",
                                           "status": "OrderCompleted", "reason": None}]
