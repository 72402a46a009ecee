"""The activities at their boundary: contracts in, contracts out (S4, S8, S9, X6, X7)."""

import pytest
from pydantic import ValidationError

from activities import steps
from orders.models import ProcessState
from tests.support.records import record_in

REQUEST = {"schemaVersion": 1, "messageId": "ORD-1:1:charge", "orderId": "ORD-1",
           "instanceId": "ORD-1:1", "service": "payment", "operation": "charge",
           "idempotencyKey": "ORD-1:charge", "completeBy": "2030-01-01T00:00:30.000000Z",
           "maxAttempts": 3, "eventName": "charge-reply", "replyTo": "agent-replies",
           "payload": {"orderId": "ORD-1", "amount": "20.00", "currency": "USD"}}


def test_begin_attempt_refuses_a_misspelt_key_before_touching_the_record(services, stores,
                                                                          clock):
    before = record_in(stores.states, clock)
    with pytest.raises(ValidationError, match="completeby"):
        steps.begin_attempt({"orderId": "ORD-1", "instanceId": "ORD-1:1",
                             "completeby": "2030-01-01T00:00:30.000000Z"}, services)
    assert stores.states.get("ORD-1") == before


def test_begin_attempt_answers_with_its_result_contract(services, stores, clock):
    record_in(stores.states, clock)
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1",
            "completeBy": "2030-01-01T00:00:30.000000Z"}
    assert steps.begin_attempt(data, services) == {"fenced": False,
                                                   "replyTo": "replies-acme"}
    stored = stores.states.get("ORD-1")
    assert stored.complete_by.isoformat() == "2030-01-01T00:00:30+00:00"
    stale = {**data, "instanceId": "ORD-1:0"}
    assert steps.begin_attempt(stale, services) == {"fenced": True, "replyTo": None}


def test_reserve_inventory_keeps_sku_and_quantity(services, stores, clock):
    record_in(stores.states, clock)
    data = {"orderId": "ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2, "unitPrice": "10.00",
                                           "discount": "0", "tax": "0"}]}
    assert steps.reserve_inventory(data, services) == {
        "reservationId": "RES-ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}


def test_a_send_input_without_workflow_version_logs_the_records_version(services, stores,
                                                                        clock, sender):
    # Inputs recorded before requests were logged carry no workflowVersion (X6).
    record_in(stores.states, clock, workflow_version=2)
    assert steps.send_agent_request(REQUEST, services) == "ORD-1:1:charge"
    (requested,) = stores.compensation.entries("ORD-1")
    assert (requested.step.value, requested.workflow_version) == ("charge_requested", 2)
    assert sender.bodies("payment-requests") == [REQUEST]


def test_the_send_input_names_its_version_and_it_stays_off_the_queue(services, stores, clock,
                                                                     sender):
    record_in(stores.states, clock, workflow_version=2)
    steps.send_agent_request({**REQUEST, "workflowVersion": 1}, services)
    assert stores.compensation.entries("ORD-1")[0].workflow_version == 1
    assert sender.bodies("payment-requests") == [REQUEST]


@pytest.mark.parametrize(("instance", "message_id"), [
    ("ORD-1:2", "ORD-1:OrderFailed:ORD-1:2"),
    (None, "ORD-1:OrderFailed"),  # the form recorded before instanceId was sent (X6)
])
def test_publish_status_dedupes_per_attempt(services, sender, instance, message_id):
    data = {"orderId": "ORD-1", "replyTo": "replies-acme", "status": "OrderFailed",
            "reason": "charge failed permanently: declined"}
    if instance:
        data["instanceId"] = instance
    steps.publish_status(data, services)
    ((queue, message),) = sender.sent
    assert (queue, message.message_id) == ("replies-acme", message_id)
    assert message.body["reason"] == "charge failed permanently: declined"


def test_alert_operator_sends_one_alert_per_attempt_and_kind(services, sender):
    steps.alert_operator({"kind": "OrderError", "orderId": "ORD-1", "instanceId": "ORD-1:1",
                          "reason": "charge failed permanently: declined"}, services)
    ((queue, message),) = sender.sent
    assert (queue, message.message_id) == ("operator-alerts", "OrderError:ORD-1:1")
    assert message.body["kind"] == "OrderError" and message.body["orderId"] == "ORD-1"


def test_finish_attempt_refuses_a_state_other_than_processed(services, stores, clock):
    record_in(stores.states, clock)
    with pytest.raises(ValueError, match="'Processed'"):
        steps.finish_attempt({"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Error"},
                             services)
    assert stores.states.get("ORD-1").process_state is ProcessState.PROCESSING
