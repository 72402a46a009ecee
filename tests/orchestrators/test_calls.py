"""The call helper through the SDK's replay: what it schedules, how it reads results (D4, X8)."""

import json

import azure.durable_functions as df
import pytest

from orchestrators.calls import call
from orchestrators.order_workflow import order_workflow
from orders import names
from orders.models.activities import LOAD_ORDER, PENDING_UNDOS, ActivityResultError
from tests.orchestrators.history import History, replay
from tests.orchestrators.test_order_workflow_replay import IID, INPUT, ORDER

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
RETRY = df.RetryOptions(first_retry_interval_in_milliseconds=5000, max_number_of_attempts=3)


def test_a_result_that_breaks_its_contract_fails_the_instance_naming_activity_and_field():
    history = History(names.ORDER_WORKFLOW, IID, INPUT)
    history.activity("begin_attempt", {"fenced": "perhaps", "replyTo": "replies-acme"})
    with pytest.raises(Exception, match="activity begin_attempt: its result breaks its "
                                        "contract BeginAttemptResult: fenced: Input should "
                                        "be a valid boolean"):
        replay(order_workflow, history)


def test_the_result_is_read_with_the_declared_contract():
    with pytest.raises(ActivityResultError, match=r"activity pending_undos: .*: 0\.orderId: "
                                                  "Field required"):
        PENDING_UNDOS.read_result([{"step": "charge"}])
    assert str(LOAD_ORDER.read_result(ORDER).total_price) == ORDER["totalPrice"]


def test_an_input_of_another_type_is_refused_before_anything_is_scheduled():
    with pytest.raises(TypeError, match="activity load_order: input must be a str, got dict"):
        LOAD_ORDER.payload({"orderId": "ORD-1"})


def loaded_with_retry(context):
    order = yield from call(context, LOAD_ORDER, "ORD-1", retry=RETRY)
    return order.order_key


def test_with_retry_options_the_call_schedules_the_retry_variant_with_the_same_input():
    history = History("loader", IID, {**INPUT, "traceParent": PARENT})
    history.activity("load_order", ORDER)
    state = json.loads(df.Orchestrator.create(loaded_with_retry)(history.context()))
    [[retried]] = state["actions"]  # the SDK's compound action around the attempts
    [scheduled] = retried["compoundActions"]
    assert scheduled["actionType"] == 1  # CallActivityWithRetry
    assert scheduled["functionName"] == "load_order"
    assert scheduled["retryOptions"] == {"firstRetryIntervalInMilliseconds": 5000,
                                         "maxNumberOfAttempts": 3}
    assert json.loads(scheduled["input"]) == {"traceParent": PARENT, "instanceId": IID,
                                              "input": "ORD-1"}
    assert (state["isDone"], state["output"]) == (True, "ORD-1")
