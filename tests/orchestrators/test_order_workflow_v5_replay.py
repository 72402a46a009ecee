"""Versions 5 and 6 replayed over recorded histories: version 3's and 4's steps with the
reservation made by ``begin_attempt``, the same effects in the same order (X6, S4-S9)."""

import pytest

from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import BEGIN_ATTEMPT, FINISH_ATTEMPT, RESERVE_INVENTORY
from tests.orchestrators.history import History, replay
from tests.orchestrators.test_order_workflow_replay import (
    DEADLINE,
    IID,
    INPUT,
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


@pytest.mark.parametrize("version, first, second", [
    (5, ("charge", PAID), ("ship", SHIPPED)), (6, ("ship", SHIPPED), ("charge", PAID))])
def test_versions_5_and_6_schedule_four_activities_and_end_processed(version, first,
                                                                     second):
    h = begun(version)
    for operation, result in (first, second):
        answered(h, operation, reply(operation, result=result))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        BEGIN, send(first[0], version), race(first[0], cancelled=True),
        send_after(second[0], version, *first), race(second[0], cancelled=True),
        finish(version, *second)]
    assert decision.done and decision.output == {"outcome": "processed"}
    # One start, 4 activities (x2), 2 events, 2 timers: 13 DTS actions in 7 episodes.
    assert (len(decision.calls), episodes(h)) == (4, 7)
    assert RESERVE_INVENTORY.name not in decision.calls


@pytest.mark.parametrize("version", [5, 6])
def test_out_of_stock_in_begin_attempt_fails_the_order_before_any_remote_step(version):
    h = begun(version, {**BEGUN, "reservation": OUT_OF_STOCK})
    expected = failed_for_stock(h)
    decision = replay(order_workflow, h)
    assert decision.actions == [BEGIN, *expected]
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
