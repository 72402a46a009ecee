"""Agent messages as the workflows build and read them (A1-A4, S9, X6)."""

import pytest
from pydantic import ValidationError

from azurekit.services import catalogue
from orders.models.agent_io import (
    PAYLOADS,
    CancelShipmentPayload,
    ChargePayload,
    RefundPayload,
    SendAgentRequestInput,
    ShipPayload,
)
from orders.models.messages import AgentReply, AgentRequest
from tests.orders.models.checks import wire_form_tests

REQUEST = {"schemaVersion": 1, "messageId": "ORD-1:1:charge", "orderId": "ORD-1",
           "instanceId": "ORD-1:1", "service": "payment", "operation": "charge",
           "idempotencyKey": "ORD-1:charge", "completeBy": "2030-01-01T00:00:30.000000Z",
           "maxAttempts": 4, "eventName": "charge-reply", "replyTo": "agent-replies",
           "payload": {"orderId": "ORD-1", "amount": "20.00", "currency": "USD"}}
REPLY = {"schemaVersion": 1, "messageId": "ORD-1:1:charge:reply", "orderId": "ORD-1",
         "instanceId": "ORD-1:1", "operation": "charge", "eventName": "charge-reply",
         "outcome": "Succeeded", "attempts": 1, "circuitOpen": False, "retryAt": None,
         "statusCode": 201, "errorCode": None,
         "result": {"paymentId": "pay_1", "amount": "20.00", "currency": "USD"},
         "reason": None, "requestId": "ORD-1:1:charge", "idempotencyKey": "ORD-1:charge"}

WIRE_FORMS = [
    (SendAgentRequestInput, {**REQUEST, "workflowVersion": 2}),
    (SendAgentRequestInput, REQUEST),  # an undo: no workflow version
    (ChargePayload, {"orderId": "ORD-1", "amount": "20.00", "currency": "USD"}),
    (ShipPayload, {"orderId": "ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}),
    (RefundPayload, {"orderId": "ORD-1", "chargeKey": "ORD-1:charge", "paymentId": "pay_1",
                     "amount": "20.00", "currency": "USD"}),
    (RefundPayload, {"orderId": "ORD-1", "chargeKey": "ORD-1:charge"}),
    (CancelShipmentPayload, {"orderId": "ORD-1", "shipmentKey": "ORD-1:ship",
                             "shipmentId": "shp_1"}),
    (CancelShipmentPayload, {"orderId": "ORD-1", "shipmentKey": "ORD-1:ship"}),
    (AgentRequest, REQUEST),
    (AgentReply, REPLY),
]


test_each_contract_round_trips_its_wire_form, test_a_misspelt_key_is_refused = (
    wire_form_tests(WIRE_FORMS, misspellable=8))


def test_the_send_input_wraps_the_request_and_unwraps_it_unchanged():
    request = AgentRequest.model_validate(REQUEST)
    sent = SendAgentRequestInput.of(request, 1)
    assert sent.model_dump(mode="json") == {**REQUEST, "workflowVersion": 1}
    assert sent.request() == request
    assert sent.request().model_dump(mode="json") == REQUEST  # no workflowVersion on the queue
    assert sent.queue_body() == REQUEST


def test_the_queue_body_leaves_out_the_confirmed_step_too():
    from orders.models.compensation import Step
    from orders.models.compensation_io import ConfirmedStep

    request = AgentRequest.model_validate(REQUEST)
    sent = SendAgentRequestInput.of(request, 3, ConfirmedStep(step=Step.CHARGE, result={"a": 1}))
    assert sent.queue_body() == sent.request().model_dump(mode="json") == REQUEST


def test_a_send_input_recorded_before_requests_were_logged_still_loads():
    # X6: without workflowVersion the activity reads it from the state record.
    assert SendAgentRequestInput.model_validate(REQUEST).workflow_version is None


def test_a_request_without_the_fields_with_defaults_still_loads():
    old = {k: v for k, v in REQUEST.items() if k not in ("schemaVersion", "replyTo", "payload")}
    loaded = AgentRequest.model_validate(old)
    assert (loaded.schema_version, loaded.reply_to, loaded.payload) == (1, "agent-replies", {})


def test_a_reply_from_before_circuit_and_error_codes_still_loads():
    old = {k: v for k, v in REPLY.items() if k not in ("circuitOpen", "retryAt", "errorCode")}
    loaded = AgentReply.model_validate(old)
    assert (loaded.circuit_open, loaded.retry_at, loaded.error_code) == (False, None, None)


def test_an_undo_queued_before_keys_were_sent_still_loads():
    # Refunds queued before chargeKey existed: the service undoes the latest open charge.
    assert RefundPayload.model_validate({"orderId": "ORD-1"}).to_payload() == {
        "orderId": "ORD-1"}
    assert CancelShipmentPayload.model_validate({"orderId": "ORD-1"}).shipment_key is None


def test_the_queue_messages_refuse_a_misspelt_required_key():
    wrong = {("completeby" if k == "completeBy" else k): v for k, v in REQUEST.items()}
    with pytest.raises(ValidationError, match="completeBy"):
        AgentRequest.model_validate(wrong)
    wrong = {("OUTCOME" if k == "outcome" else k): v for k, v in REPLY.items()}
    with pytest.raises(ValidationError, match="outcome"):
        AgentReply.model_validate(wrong)


def test_the_queue_messages_tolerate_unknown_keys_by_design():
    # AgentRequest and AgentReply cross the queues, where a message written by a newer
    # deployment may meet an older reader; they ignore keys they do not know (see
    # orders.models.agent_io). A misspelt optional key is caught instead by the replay
    # tests (tests/orchestrators), which compare every request the workflows send with
    # its literal wire form.
    reply = AgentReply.model_validate({**REPLY, "traceId": "abc"})
    assert reply.model_dump(mode="json") == REPLY


def test_every_operation_has_a_payload_contract():
    assert set(PAYLOADS) == {op for spec in catalogue().services.values()
                             for op in spec.operations}
    assert {"charge", "ship", "refund", "cancel_shipment"} <= set(PAYLOADS)
    with pytest.raises(ValidationError, match="amount"):
        ChargePayload(order_key="ORD-1", amount="0", currency="USD")


def test_a_charge_amount_travels_as_a_string():
    charge = ChargePayload(order_key="ORD-1", amount="19.90", currency="EUR")
    assert charge.to_payload() == {"orderId": "ORD-1", "amount": "19.90", "currency": "EUR"}
