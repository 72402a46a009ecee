"""Versions 5 and 6 replayed over recorded histories: version 3's and 4's steps with the
reservation made by ``begin_attempt``, the same effects in the same order (X6, S4-S9)."""

import pytest

from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FAIL_ORDER,
    FINISH_ATTEMPT,
    RESERVE_INVENTORY,
)
from tests.orchestrators.history import History, replay
from tests.orchestrators.test_order_workflow_replay import (
    DEADLINE,
    IID,
    INPUT,
    ORDER,
    PAID,
    RESERVATION,
    SHIPPED,
    race,
    reply,
    send,
)
from tests.orchestrators.test_order_workflow_v3_replay import (
    answered,
    episodes,
    finish,
    send_after,
)

BEGIN = ("call", BEGIN_ATTEMPT.name, {"orderId": "ORD-1", "instanceId": IID,
                                      "completeBy": DEADLINE, "loadOrder": True,
                                      "reserve": True})
BEGUN = {"fenced": False, "replyTo": "replies-acme", "order": ORDER,
         "reservation": RESERVATION}


def begun(version, result=BEGUN):
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": version})
    h.activity(BEGIN_ATTEMPT.name, result)
    return h


def test_version_5_schedules_four_activities_and_ends_processed():
    h = begun(5)
    answered(h, "charge", reply("charge", result=PAID))
    answered(h, "ship", reply("ship", result=SHIPPED))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        BEGIN, send("charge", 5), race("charge", cancelled=True),
        send_after("ship", 5, "charge", PAID), race("ship", cancelled=True),
        finish(5, "ship", SHIPPED)]
    assert decision.done and decision.output == {"outcome": "processed"}
    # One start, 4 activities (x2), 2 events, 2 timers: 13 DTS actions in 7 episodes.
    assert (len(decision.calls), episodes(h)) == (4, 7)
    assert RESERVE_INVENTORY.name not in decision.calls


def test_version_6_ships_first_after_the_reserving_begin():
    h = begun(6)
    answered(h, "ship", reply("ship", result=SHIPPED))
    answered(h, "charge", reply("charge", result=PAID))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        BEGIN, send("ship", 6), race("ship", cancelled=True),
        send_after("charge", 6, "ship", SHIPPED), race("charge", cancelled=True),
        finish(6, "charge", PAID)]


@pytest.mark.parametrize("version", [5, 6])
def test_out_of_stock_in_begin_attempt_fails_the_order_before_any_remote_step(version):
    h = begun(version, {**BEGUN, "reservation": {**RESERVATION, "outOfStock": {
        "sku": "SKU-A", "line": 0, "requested": 2, "available": 1}}})
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": "Compensating"})
    h.activity(ALERT_OPERATOR.name, None)
    decision = replay(order_workflow, h)
    why = ("reserve_inventory failed permanently: out of stock: SKU SKU-A (line 1) "
           "requested 2, available 1")
    assert decision.actions == [
        BEGIN,
        ("call", FAIL_ORDER.name, {"orderId": "ORD-1", "instanceId": IID,
                                   "reason": f"attempt {IID}: {why}"}),
        ("call", ALERT_OPERATOR.name, {"kind": "OrderError", "orderId": "ORD-1",
                                       "instanceId": IID, "reason": why})]
    assert decision.output["outcome"] == "compensating"


def test_a_superseded_version_5_attempt_stops_after_begin_attempt():
    decision = replay(order_workflow, begun(5, {"fenced": True, "replyTo": None}))
    assert decision.actions == [BEGIN] and decision.output == {"outcome": "superseded"}


def test_a_begin_attempt_result_without_the_reservation_fails_the_attempt():
    h = begun(5, {"fenced": False, "replyTo": "replies-acme", "order": ORDER})
    with pytest.raises(Exception, match="reservation: required"):
        replay(order_workflow, h)


def test_a_version_3_history_still_replays_to_its_separate_reservation():
    # An attempt begun under version 3 keeps its own steps after the upgrade (X6): a
    # reservation in its begin result, were one there, does not replace its activity.
    h = begun(3, BEGUN)
    decision = replay(order_workflow, h)
    assert decision.calls == [BEGIN_ATTEMPT.name, RESERVE_INVENTORY.name]
