"""Replays read each earlier result once per process: the same frozen object, never a broken one."""

import copy
import json

import pytest

from orchestrators.agent_steps import read_reply
from orders.models.activities import LOAD_ORDER, PENDING_UNDOS, ActivityResultError
from orders.models.memo import ParseMemo, value_key
from tests.orchestrators.test_compensation_workflow_replay import CHARGED
from tests.orchestrators.test_order_workflow_replay import ORDER, reply


def test_an_equal_result_read_again_is_the_same_object_and_equals_a_fresh_parse():
    first = LOAD_ORDER.read_result(copy.deepcopy(ORDER))
    again = LOAD_ORDER.read_result(json.loads(json.dumps(ORDER)))
    assert again is first
    assert again == LOAD_ORDER.result.validate_python(ORDER)


def test_another_result_text_is_parsed_anew():
    other = {**ORDER, "customerId": "CUST-2"}
    assert LOAD_ORDER.read_result(other).customer_id == "CUST-2"
    assert LOAD_ORDER.read_result(ORDER).customer_id == "CUST-1"


def test_a_broken_result_fails_every_time_it_is_read():
    broken = {**ORDER, "currency": "usd"}
    for _ in range(2):
        with pytest.raises(ActivityResultError, match="activity load_order: .*currency"):
            LOAD_ORDER.read_result(broken)


def test_a_mutable_result_is_never_shared():
    first = PENDING_UNDOS.read_result([CHARGED])
    again = PENDING_UNDOS.read_result([CHARGED])
    assert again == first and again is not first


def test_the_reply_text_read_again_is_the_same_reply():
    text = json.dumps(reply("charge", result=None))
    assert read_reply(text) is read_reply(text)


def test_a_reply_holding_a_dict_is_read_anew_so_no_replay_sees_anothers_change():
    text = json.dumps(reply("charge", result={"chargeId": "c-1", "lines": [1]}))
    first = read_reply(text)
    first.result["lines"].append(2)  # a slip in orchestrator code, in one replay
    again = read_reply(text)
    assert again is not first and again.result == {"chargeId": "c-1", "lines": [1]}


def test_a_result_over_the_item_bound_is_parsed_every_time_and_never_kept():
    memo = ParseMemo(max_item_bytes=10)
    calls: list[str] = []
    for _ in range(2):
        memo.get("big", lambda: calls.append("big") or "B", weight=11)
        memo.get("small", lambda: calls.append("small") or "S", weight=10)
    assert calls == ["big", "small", "big"]


def test_the_memo_keeps_no_more_than_its_bytes_evicting_the_least_recent():
    memo = ParseMemo(size=100, max_bytes=10, max_item_bytes=10)
    calls: list[str] = []
    for text in ("a", "b", "c", "a"):  # 4 + 4 + 4 bytes: "c" evicts "a"
        memo.get(text, lambda t=text: calls.append(t) or t.upper(), weight=4)
    assert calls == ["a", "b", "c", "a"]


def test_the_largest_order_is_not_kept():
    lines = [{"sku": f"SKU-{n:05d}", "quantity": 1, "unitPrice": "1.00", "discount": "0.00",
              "tax": "0.00"} for n in range(1000)]
    big = {**ORDER, "lines": lines, "totalPrice": "1000.00"}
    assert LOAD_ORDER.read_result(big) is not LOAD_ORDER.read_result(big)


def test_the_memo_keeps_the_most_recently_used_results_only():
    memo = ParseMemo(size=2)
    calls: list[str] = []

    def parse(text: str):
        return lambda: calls.append(text) or text.upper()

    assert [memo.get(t, parse(t)) for t in ("a", "b", "a", "c", "b", "a")] == list("ABACBA")
    assert calls == ["a", "b", "c", "b", "a"]  # "c" evicted "b", the least recent; "b" "a"


def test_value_keys_tell_apart_values_json_would_decode_differently():
    keys = {value_key(v) for v in (1, 1.0, True, "1", [1], {"a": 1}, {"a": 1.0})}
    assert len(keys) == 7
    assert value_key({"a": [1, "x"]}) == value_key(json.loads('{"a": [1, "x"]}'))
