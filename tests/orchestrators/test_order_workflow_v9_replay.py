"""Versions 9 and 10 replayed over recorded histories: 7's and 8's steps, acting only on a
reply bound to the attempt's outstanding request (A4, X6), each race with its own timer.

A reply raised on the right event that answers another request (no echo, another
attempt's, another operation's, another key) is ignored with a WARNING and a count; the
wait goes on against a new timer at the same CompleteBy, and gives up as timed out after
``MAX_IGNORED_REPLIES``. A timer is never raced twice: the SDK would leave it out of the
second ``WhenAny`` and on Azure its firing would not end that wait.
"""

import pytest

from orchestrators.agent_steps import MAX_IGNORED_REPLIES
from orchestrators.order_workflow import order_workflow
from orders.models.activities import FAIL_ORDER, FINISH_ATTEMPT
from tests.orchestrators.history import replay
from tests.orchestrators.test_order_workflow_replay import IID, PAID, SHIPPED, reply
from tests.orchestrators.test_order_workflow_v3_replay import finish, send_after
from tests.orchestrators.test_order_workflow_v7_replay import (
    AT_DEADLINE,
    RESULTS,
    begin,
    begun,
    race,
)


def bound(operation, outcome="Succeeded", result=None, **fields):
    """The genuine agent's reply: it echoes the request's MessageId and idempotency key."""
    return {**reply(operation, outcome, result, **fields), "requestId": f"{IID}:{operation}",
            "idempotencyKey": f"ORD-1:{operation}"}


FORGED = {
    "no echo": lambda op: reply(op, result=RESULTS[op]),
    "another attempt": lambda op: {**bound(op, result=RESULTS[op]),
                                   "requestId": f"ORD-1:2:{op}", "instanceId": "ORD-1:2"},
    "another request": lambda op: {**bound(op, result=RESULTS[op]), "requestId": "x:charge"},
    "another key": lambda op: {**bound(op, result=RESULTS[op]), "idempotencyKey": "ORD-9:x"},
    "not a reply": lambda op: {"outcome": "Succeeded"},
}


@pytest.mark.parametrize("forged", sorted(FORGED))
@pytest.mark.parametrize("version, first, second", [(9, "charge", "ship"),
                                                    (10, "ship", "charge")])
def test_a_reply_to_no_outstanding_request_is_ignored_and_the_genuine_one_acted_on(
        version, first, second, forged):
    h = begun(version)
    for operation in (first, second):
        if operation == second:
            h.activity("send_agent_request", f"{IID}:{second}")
        h.timer(AT_DEADLINE)
        h.raised(f"{operation}-reply", FORGED[forged](operation))
        h.timer(AT_DEADLINE)
        h.raised(f"{operation}-reply", bound(operation, result=RESULTS[operation]))
    h.activity(FINISH_ATTEMPT.name, {"fenced": False})
    decision = replay(order_workflow, h)
    # Each race its own timer, cancelled when a reply (ignored or acted on) won it.
    assert decision.actions == [
        begin(version), race(first, timer=True), race(first, timer=True),
        send_after(second, version, first, RESULTS[first]), race(second, timer=True),
        race(second, timer=True), finish(version, second, RESULTS[second])]
    assert decision.done and decision.output == {"outcome": "processed"}


def test_an_ignored_reply_warns_and_counts_once_in_the_episode_that_receives_it(
        caplog, readings):
    h = begun(9)
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))
    with caplog.at_level("WARNING", logger="orders.workflow"):
        waiting = replay(order_workflow, h)
        h.timer(AT_DEADLINE)
        h.raised("charge-reply", reply("charge", result=PAID))
        replay(order_workflow, h)  # the first ignored reply is replayed now: no repeat
    assert not waiting.done
    warned = [r for r in caplog.records if "answers no outstanding request" in r.message]
    assert len(warned) == 2 and all(r.levelname == "WARNING" for r in warned)
    assert readings.points()["agent.replies.ignored"] == {(("operation", "charge"),): 2}


def test_a_forged_success_before_a_declined_charge_fails_the_order_as_declined():
    h = begun(9)
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", reply("charge", result=PAID))  # forged: acts on nothing
    h.timer(AT_DEADLINE)
    h.raised("charge-reply", bound("charge", "PermanentFailure", statusCode=402,
                                   errorCode="card_declined", reason="card declined"))
    h.activity(FAIL_ORDER.name, {"fenced": False, "state": "Compensating"})
    h.activity("alert_operator", None)
    decision = replay(order_workflow, h)
    assert "send_agent_request" not in decision.calls  # nothing shipped
    assert decision.output == {"outcome": "compensating", "step": "charge",
                               "reason": "card declined"}


def test_past_the_cap_of_ignored_replies_the_attempt_times_out_its_timers_cancelled():
    h = begun(9)
    for _ in range(MAX_IGNORED_REPLIES):
        h.timer(AT_DEADLINE)
        h.raised("charge-reply", reply("charge", result=PAID))
    decision = replay(order_workflow, h)
    assert decision.actions == [begin(9), *[race("charge", timer=True)] * MAX_IGNORED_REPLIES]
    assert decision.done and decision.output == {"outcome": "timedOut", "step": "charge"}


def test_the_timer_still_ends_a_wait_that_ignored_a_reply():
    h = begun(10)
    h.timer(AT_DEADLINE)
    h.raised("ship-reply", reply("ship", result=SHIPPED))
    timer = h.timer(AT_DEADLINE)  # the next race's own, at the same CompleteBy
    h.timer_fired(timer, AT_DEADLINE)
    decision = replay(order_workflow, h)
    assert decision.actions == [begin(10), race("ship", timer=True), race("ship", timer=False)]
    assert decision.done and decision.output == {"outcome": "timedOut", "step": "ship"}


@pytest.mark.parametrize("version, first, second", [(9, "charge", "ship"),
                                                    (10, "ship", "charge")])
def test_the_second_step_races_a_timer_of_its_own_which_ends_the_attempt(
        version, first, second):
    h = begun(version)
    h.timer(AT_DEADLINE)
    h.raised(f"{first}-reply", bound(first, result=RESULTS[first]))
    h.activity("send_agent_request", f"{IID}:{second}")
    timer = h.timer(AT_DEADLINE)
    h.timer_fired(timer, AT_DEADLINE)
    decision = replay(order_workflow, h)
    assert decision.actions == [
        begin(version), race(first, timer=True),
        send_after(second, version, first, RESULTS[first]), race(second, timer=False)]
    assert decision.done and decision.output == {"outcome": "timedOut", "step": second}
