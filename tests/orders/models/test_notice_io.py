"""Contracts of the notifying activities (S7, S8, X6): wire forms, old forms."""

import pytest
from pydantic import ValidationError

from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from tests.orders.models.checks import wire_form_tests

WIRE_FORMS = [
    (PublishStatusInput, {"orderId": "ORD-1", "instanceId": "ORD-1:1",
                          "replyTo": "replies-acme", "status": "OrderCompleted"}),
    (PublishStatusInput, {"orderId": "ORD-1", "instanceId": "ORD-1:comp:1",
                          "replyTo": "replies-acme", "status": "CompensationFailed",
                          "reason": "declined; refund refused: 402 no"}),
    (AlertOperatorInput, {"kind": "OrderError", "orderId": "ORD-1", "instanceId": "ORD-1:1",
                          "reason": "charge failed permanently: declined"}),
    (AlertOperatorInput, {"kind": "UnknownWorkflowVersion", "orderId": "ORD-1",
                          "instanceId": "ORD-1:1", "reason": "version 9 is not registered"}),
]


test_each_contract_round_trips_its_wire_form, test_a_misspelt_key_is_refused = (
    wire_form_tests(WIRE_FORMS))


def test_a_status_recorded_before_instance_ids_still_loads():
    # The failure path published without instanceId before it was added (X6).
    old = {"orderId": "ORD-1", "replyTo": "replies-acme", "status": "OrderFailed",
           "reason": "charge failed permanently: declined"}
    loaded = PublishStatusInput.model_validate(old)
    assert loaded.instance_id is None
    assert loaded.model_dump(mode="json") == old


def test_a_status_reaches_only_a_valid_reply_queue():
    with pytest.raises(ValidationError, match="replyTo"):
        PublishStatusInput.model_validate({"orderId": "ORD-1", "replyTo": "#all",
                                           "status": "OrderCompleted"})


def test_an_alert_kind_must_be_known():
    with pytest.raises(ValidationError, match="kind"):
        AlertOperatorInput.model_validate({"kind": "Oops", "orderId": "ORD-1",
                                           "instanceId": "ORD-1:1", "reason": "x"})
