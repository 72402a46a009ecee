"""Replays read each earlier result once per process: the same frozen object, never a broken one."""

import copy
import json

import pytest

from orchestrators.remote import read_reply
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
    text = json.dumps(reply("charge", result={"chargeId": "c-1"}))
    assert read_reply(text) is read_reply(text)


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
