"""Inputs built once per value (``call_built``): the same scheduled text, never a stale one."""

import json

import pytest

from orchestrators import calls
from orchestrators.calls import call, call_built
from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import BEGIN_ATTEMPT, RESERVE_INVENTORY
from orders.models.attempt_io import BeginAttemptInput
from orders.models.memo import ParseMemo, Same
from tests.orchestrators.history import History, replay
from tests.orchestrators.test_order_workflow_replay import IID, INPUT, ORDER
from tests.orchestrators.test_order_workflow_v3_replay import BEGUN, V3

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
BEGIN = {"fenced": False, "replyTo": "replies-acme"}


def begin_input(order_key: str = "ORD-1") -> BeginAttemptInput:
    return BeginAttemptInput(order_key=order_key, instance_id=IID,
                             complete_by="2030-01-01T00:00:30Z", load_order=True)


def scheduled_text(orchestrator, input_) -> str:
    history = History("starter", IID, input_)
    state = json.loads(calls.df.Orchestrator.create(orchestrator)(history.context()))
    [[action]] = state["actions"]
    return action["input"]


@pytest.mark.parametrize("input_", [INPUT, {**INPUT, "traceParent": PARENT}])
def test_the_scheduled_input_is_the_text_call_schedules_on_every_replay(input_):
    def plain(context):
        yield from call(context, BEGIN_ATTEMPT, begin_input())

    def built(context):
        yield from call_built(context, BEGIN_ATTEMPT, ("plain", input_.get("traceParent")),
                              begin_input)

    expected = scheduled_text(plain, input_)
    assert [scheduled_text(built, input_) for _ in range(3)] == [expected] * 3
    assert ('"traceParent"' in expected) is ("traceParent" in input_)


def test_build_runs_once_per_key_and_each_call_gets_its_own_copy():
    builds = []

    def build():
        builds.append(1)
        return begin_input()

    def twice(context):
        yield from call_built(context, BEGIN_ATTEMPT, ("once",), build)

    texts = {scheduled_text(twice, INPUT) for _ in range(3)}
    assert (len(texts), len(builds)) == (1, 1)
    payloads = []

    def capture(context):
        payloads.append(json.loads(calls.INPUTS.get(
            (BEGIN_ATTEMPT, ("once",), None, IID), lambda: pytest.fail("not kept"))))
        yield from call_built(context, BEGIN_ATTEMPT, ("once",), build)

    scheduled_text(capture, INPUT)
    payloads[0]["orderId"] = "changed"  # a copy: the kept text is not touched
    assert json.loads(scheduled_text(twice, INPUT))["orderId"] == "ORD-1"


def test_an_input_its_contract_refuses_fails_every_replay_and_is_not_kept():
    def broken(context):
        yield from call_built(context, BEGIN_ATTEMPT, ("broken",), lambda: begin_input("x y"))

    for _ in range(2):
        with pytest.raises(Exception, match="BeginAttemptInput\norder_key"):
            scheduled_text(broken, INPUT)
    key = (BEGIN_ATTEMPT, ("broken",), None, IID)
    assert calls.INPUTS.get(key, lambda: "absent") == "absent"


def test_two_orders_equal_by_value_but_spelled_apart_each_schedule_their_own_text():
    # Decimal("10.0") == Decimal("10.00"), but the reservation carries the order as written.
    spelled = {**ORDER, "lines": [{**ORDER["lines"][0], "unitPrice": "10.0"}]}
    for order, price in ((ORDER, "10.00"), (spelled, "10.0"), (ORDER, "10.00")):
        history = History(names.ORDER_WORKFLOW, IID, V3)
        history.activity(BEGIN_ATTEMPT.name, {**BEGUN, "order": order})
        [lines] = [c["lines"] for c in replay(order_workflow, history).inputs(
            RESERVE_INVENTORY.name)]
        assert lines[0]["unitPrice"] == price


def test_same_equals_only_the_same_object():
    a, b = dict(ORDER), dict(ORDER)
    assert Same(a) == Same(a) and hash(Same(a)) == hash(Same(a))
    assert Same(a) != Same(b) and Same(a) != a


def test_a_result_heavier_than_an_item_may_be_is_built_every_time():
    memo = ParseMemo(max_item_bytes=5)
    assert memo.get("k", lambda: "short", weight=len) == "short"
    assert memo.get("k", lambda: "again", weight=len) == "short"
    assert memo.get("long", lambda: "too long", weight=len) == "too long"
    assert memo.get("long", lambda: "parsed anew", weight=len) == "parsed anew"


def test_alternating_replays_each_read_their_own_trace_parent():
    other = "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    def traced(context):
        yield from call(context, BEGIN_ATTEMPT, begin_input())

    for parent in (PARENT, other, PARENT, None, other):
        input_ = INPUT if parent is None else {**INPUT, "traceParent": parent}
        assert json.loads(scheduled_text(traced, input_)).get("traceParent") == parent
