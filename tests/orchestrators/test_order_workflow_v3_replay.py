"""Versions 3 and 4 replayed over recorded histories: version 1's and 2's steps in fewer
activities, the same effects in the same order (X6, S4-S9; docs/performance.md)."""

from datetime import timedelta

import pytest

from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FAIL_ORDER,
    FINISH_ATTEMPT,
    PUBLISH_STATUS,
    RESERVE_INVENTORY,
    SEND_AGENT_REQUEST,
)
from tests.orchestrators.history import T0, History, replay
from tests.orchestrators.test_order_workflow_replay import (
    DEADLINE,
    IID,
    INPUT,
    LINES,
    ORDER,
    OUT_OF_STOCK,
    PAID,
    RESERVATION,
    SHIPPED,
    failed_for_stock,
    race,
    reply,
    send,
)

V3 = {**INPUT, "workflowVersion": 3}
BEGIN = ("call", BEGIN_ATTEMPT.name, {"orderId": "ORD-1", "instanceId": IID,
                                      "completeBy": DEADLINE, "loadOrder": True})
RESERVE = ("call", RESERVE_INVENTORY.name, {"orderId": "ORD-1", "lines": LINES})
BEGUN = {"fenced": False, "replyTo": "replies-acme", "order": ORDER}


def send_after(operation, version, step, result):
    """The send of ``operation`` that first logs the previous step's confirmed entry."""
    name, data = send(operation, version)[1:]
    return ("call", name, {**data, "confirmed": {"step": step, "result": result}})


def finish(version, step, result):
    return ("call", FINISH_ATTEMPT.name, {
        "orderId": "ORD-1", "instanceId": IID, "state": "Processed",
        "confirmed": {"step": step, "result": result}, "workflowVersion": version,
        "replyTo": "replies-acme"})


def begun(input_=V3):
    h = History(names.ORDER_WORKFLOW, IID, input_)
    h.activity(BEGIN_ATTEMPT.name, BEGUN)
    return h


def started(input_=V3):
    h = begun(input_)
    h.activity(RESERVE_INVENTORY.name, RESERVATION)
    return h


def answered(h, operation, answer):
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:{operation}")
    h.timer(T0 + timedelta(seconds=30))
    h.raised(f"{operation}-reply", answer)


def episodes(h):
    return sum(1 for e in h.events if e["EventType"] == 12)


def test_version_3_schedules_five_activities_and_ends_processed():
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    answered(h, "ship", reply("ship", result=SHIPPED))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        BEGIN, RESERVE, send("charge", 3), race("charge", cancelled=True),
        send_after("ship", 3, "charge", PAID), race("ship", cancelled=True),
        finish(3, "ship", SHIPPED)]
    assert decision.done and decision.output == {"outcome": "processed"}
    # One start, 5 activities (x2), 2 events, 2 timers: 15 DTS actions in 8 episodes.
    assert (len(decision.calls), episodes(h)) == (5, 8)


def test_each_version_3_episode_schedules_only_the_next_step():
    h = History(names.ORDER_WORKFLOW, IID, V3)
    assert replay(order_workflow, h).actions == [BEGIN]
    h.activity(BEGIN_ATTEMPT.name, BEGUN)
    assert replay(order_workflow, h).actions == [BEGIN, RESERVE]
    h.activity(RESERVE_INVENTORY.name, RESERVATION)
    assert replay(order_workflow, h).actions == [BEGIN, RESERVE, send("charge", 3)]
    answered(h, "charge", reply("charge", result=PAID))
    assert replay(order_workflow, h).actions[-1] == send_after("ship", 3, "charge", PAID)
    answered(h, "ship", reply("ship", result=SHIPPED))
    waiting = replay(order_workflow, h)
    assert waiting.actions[-1] == finish(3, "ship", SHIPPED) and not waiting.done


def test_version_4_ships_first_and_its_finish_logs_the_charge():
    h = started({**INPUT, "workflowVersion": 4})
    answered(h, "ship", reply("ship", result=SHIPPED))
    answered(h, "charge", reply("charge", result=PAID))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        BEGIN, RESERVE, send("ship", 4), race("ship", cancelled=True),
        send_after("charge", 4, "ship", SHIPPED), race("charge", cancelled=True),
        finish(4, "charge", PAID)]
    assert decision.output == {"outcome": "processed"}


def test_a_fenced_finish_publishes_nothing():
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    answered(h, "ship", reply("ship", result=SHIPPED))
    h.activity(FINISH_ATTEMPT.name, {"fenced": True})
    decision = replay(order_workflow, h)
    assert decision.calls[-1] == FINISH_ATTEMPT.name
    assert PUBLISH_STATUS.name not in decision.calls
    assert decision.done and decision.output == {"outcome": "superseded"}


def test_a_superseded_version_3_attempt_stops_after_begin_attempt():
    h = History(names.ORDER_WORKFLOW, IID, V3)
    h.activity(BEGIN_ATTEMPT.name, {"fenced": True, "replyTo": None})
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN] and decision.output == {"outcome": "superseded"}


@pytest.mark.parametrize("told", [False, True])
def test_a_permanent_failure_after_the_charge_fails_the_order_as_version_1_does(told):
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    answered(h, "ship", reply("ship", "PermanentFailure", statusCode=422,
                              errorCode="undeliverable", reason="no such address"))
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": "Error" if told else "Compensating"})
    h.activity(ALERT_OPERATOR.name, None)
    if told:
        h.activity(PUBLISH_STATUS.name, None)
    decision = replay(order_workflow, h)
    why = "ship failed permanently: no such address"
    expected = [
        BEGIN, RESERVE, send("charge", 3), race("charge", cancelled=True),
        send_after("ship", 3, "charge", PAID), race("ship", cancelled=True),
        ("call", FAIL_ORDER.name, {"orderId": "ORD-1", "instanceId": IID,
                                   "reason": f"attempt {IID}: {why}"}),
        ("call", ALERT_OPERATOR.name, {"kind": "OrderError", "orderId": "ORD-1",
                                       "instanceId": IID, "reason": why})]
    if told:
        expected.append(("call", PUBLISH_STATUS.name, {
            "orderId": "ORD-1", "instanceId": IID, "replyTo": "replies-acme",
            "status": "OrderFailed", "reason": why}))
    assert decision.actions == expected
    assert decision.output == {"outcome": "error" if told else "compensating",
                               "step": "ship", "reason": "no such address"}


@pytest.mark.parametrize("version", [3, 4])
def test_out_of_stock_fails_a_version_3_or_4_order_before_any_remote_step(version):
    h = begun({**INPUT, "workflowVersion": version})
    h.activity(RESERVE_INVENTORY.name, OUT_OF_STOCK)
    expected = failed_for_stock(h)
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN, RESERVE, *expected]
    assert decision.output["outcome"] == "compensating"


def test_a_timed_out_step_after_the_charge_leaves_the_record_for_the_supervisor():
    h = started()
    answered(h, "charge", reply("charge", result=PAID))
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:ship")
    timer_id = h.timer(T0 + timedelta(seconds=30))
    h.timer_fired(timer_id, T0 + timedelta(seconds=30))
    decision = replay(order_workflow, h)
    assert decision.actions[-2:] == [send_after("ship", 3, "charge", PAID),
                                     race("ship", cancelled=False)]
    assert decision.output == {"outcome": "timedOut", "step": "ship"}


def test_a_begin_attempt_result_without_the_order_fails_the_attempt():
    h = History(names.ORDER_WORKFLOW, IID, V3)
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme"})
    with pytest.raises(Exception, match="order: required"):
        replay(order_workflow, h)
