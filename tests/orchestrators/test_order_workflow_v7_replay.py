"""Versions 7 and 8 replayed over recorded histories: versions 5's and 6's steps with the first
request sent by ``begin_attempt`` and one durable timer per attempt (X6, S4-S9, S6)."""

from datetime import timedelta

import pytest

from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FAIL_ORDER,
    FINISH_ATTEMPT,
    SEND_AGENT_REQUEST,
)
from tests.orchestrators.history import T0, History, replay, replay_failing
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
    reply,
)
from tests.orchestrators.test_order_workflow_v3_replay import episodes, finish, send_after

AT_DEADLINE = T0 + timedelta(seconds=30)
FIRST = {7: ("payment", "charge"), 8: ("shipping", "ship"), 9: ("payment", "charge"),
         10: ("shipping", "ship")}
RESULTS = {"charge": PAID, "ship": SHIPPED}


def begin(version):
    service, operation = FIRST[version]
    return ("call", BEGIN_ATTEMPT.name, {
        "orderId": "ORD-1", "instanceId": IID, "completeBy": DEADLINE, "loadOrder": True,
        "reserve": True, "sendFirst": {"service": service, "operation": operation,
                                       "maxAttempts": 4}})


def begun(version, **result):
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": version})
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme",
                                    "order": ORDER, "reservation": RESERVATION,
                                    "sent": f"{IID}:{FIRST[version][1]}", **result})
    return h


def race(operation, timer=None):
    """The wait for ``operation``'s reply, raced against the attempt's one timer.

    ``timer`` is the timer's action (``cancelled`` flag) where this race schedules it, None
    in a later race, which adopts the timer already scheduled.
    """
    children = [("wait", f"{operation}-reply")]
    if timer is not None:
        children.append(("timer", DEADLINE, timer))
    return ("any", children)


@pytest.mark.parametrize("version, first, second", [(7, "charge", "ship"),
                                                     (8, "ship", "charge")])
def test_versions_7_and_8_run_three_activities_and_one_timer(version, first, second):
    h = begun(version)
    timer = h.timer(AT_DEADLINE)
    h.raised(f"{first}-reply", reply(first, result=RESULTS[first]))
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:{second}")
    h.raised(f"{second}-reply", reply(second, result=RESULTS[second]))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    assert decision.actions == [
        begin(version), race(first, timer=True),
        send_after(second, version, first, RESULTS[first]), race(second),
        finish(version, second, RESULTS[second])]
    assert decision.done and decision.output == {"outcome": "processed"}
    # One start, 3 activities (x2), 2 events, 1 timer: 10 DTS actions in 6 episodes.
    assert (len(decision.calls), episodes(h), timer) == (3, 6, 1)
    assert sum(e["EventType"] == 10 for e in h.events) == 1  # TimerCreated


def test_each_version_7_episode_schedules_only_the_next_step_and_one_timer():
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": 7})
    assert replay(order_workflow, h).actions == [begin(7)]
    h = begun(7)
    waiting = replay(order_workflow, h)
    assert waiting.actions == [begin(7), race("charge", timer=False)] and not waiting.done
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))
    sending = replay(order_workflow, h)
    # The timer stays: it races the next reply too.
    assert sending.actions == [begin(7), race("charge", timer=False),
                               send_after("ship", 7, "charge", PAID)]
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:ship")
    assert replay(order_workflow, h).actions[-1] == race("ship")
    h.raised("ship-reply", reply("ship", result=SHIPPED))
    finishing = replay(order_workflow, h)
    assert finishing.actions == [begin(7), race("charge", timer=True),
                                 send_after("ship", 7, "charge", PAID), race("ship"),
                                 finish(7, "ship", SHIPPED)]


def test_the_one_timer_ends_the_second_step_at_completeby():
    h = begun(7)
    timer = h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:ship")
    h.timer_fired(timer, AT_DEADLINE)
    decision = replay(order_workflow, h)
    assert decision.actions[-2:] == [send_after("ship", 7, "charge", PAID), race("ship")]
    assert FINISH_ATTEMPT.name not in decision.calls
    assert decision.done and decision.output == {"outcome": "timedOut", "step": "ship"}


def test_a_deadline_that_passed_while_the_next_request_was_sent_ends_the_attempt_at_once():
    # The timer fired before the send completed: the next race finds it fired and ends
    # the attempt in the send's episode, though no reply is late yet.
    h = begun(7)
    timer = h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))
    sent = h.scheduled(SEND_AGENT_REQUEST.name)
    h.timer_fired(timer, AT_DEADLINE)
    h.completed(sent, f"{IID}:ship")
    decision = replay(order_workflow, h)
    assert decision.done and decision.output == {"outcome": "timedOut", "step": "ship"}
    assert FINISH_ATTEMPT.name not in decision.calls


def test_a_permanent_failure_cancels_the_timer_and_fails_the_order():
    h = begun(7)
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", "PermanentFailure", statusCode=402,
                                   errorCode="card_declined", reason="card declined"))
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": "Compensating"})
    h.activity(ALERT_OPERATOR.name, None)
    decision = replay(order_workflow, h)
    assert decision.actions[:2] == [begin(7), race("charge", timer=True)]
    assert decision.calls[1:] == [FAIL_ORDER.name, ALERT_OPERATOR.name]
    assert decision.output == {"outcome": "compensating", "step": "charge",
                               "reason": "card declined"}


def test_a_transient_failure_of_the_second_step_cancels_the_timer():
    h = begun(8)
    h.timer(AT_DEADLINE)
    h.raised("ship-reply", reply("ship", result=SHIPPED))
    h.activity(SEND_AGENT_REQUEST.name, f"{IID}:charge")
    h.raised("charge-reply", reply("charge", "TransientFailure", statusCode=503,
                                   reason="503 after 4 attempts"))
    decision = replay(order_workflow, h)
    assert decision.actions[1] == race("ship", timer=True)
    assert decision.output == {"outcome": "transientFailure", "step": "charge"}


def test_out_of_stock_sends_nothing_and_creates_no_timer():
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": 7})
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme",
                                    "order": ORDER, "reservation": OUT_OF_STOCK})
    expected = failed_for_stock(h)
    decision = replay(order_workflow, h)
    assert decision.actions == [begin(7), *expected]
    assert decision.output["outcome"] == "compensating"


def test_a_begin_result_without_the_sent_request_fails_the_attempt():
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": 7})
    h.activity(BEGIN_ATTEMPT.name, {"fenced": False, "replyTo": "replies-acme",
                                    "order": ORDER, "reservation": RESERVATION})
    with pytest.raises(Exception, match="sent: required"):
        replay(order_workflow, h)


def test_a_superseded_version_7_attempt_stops_after_begin_attempt():
    h = History(names.ORDER_WORKFLOW, IID, {**INPUT, "workflowVersion": 7})
    h.activity(BEGIN_ATTEMPT.name, {"fenced": True, "replyTo": None})
    decision = replay(order_workflow, h)
    assert decision.actions == [begin(7)] and decision.output == {"outcome": "superseded"}


def test_a_failed_send_of_the_second_step_cancels_the_timer_as_the_instance_fails():
    h = begun(7)
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))
    h.failed_activity(SEND_AGENT_REQUEST.name, "MessagingUnavailableError", "bus down")
    error, decision = replay_failing(order_workflow, h)
    assert "bus down" in error
    assert decision.actions[1] == race("charge", timer=True)  # cancelled: none left pending


def test_a_broken_first_reply_cancels_the_timer_as_the_instance_fails():
    h = begun(7)
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", {"not": "a reply"})
    error, decision = replay_failing(order_workflow, h)
    assert "validation error" in error.lower()
    assert decision.actions == [begin(7), race("charge", timer=True)]
