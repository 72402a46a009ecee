"""Contracts of the compensation workflow and log (S9, X6): wire forms, old forms."""

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from orders.models import StateRecord
from orders.models.compensation_io import (
    COMPENSATION_OUTCOME,
    PENDING_UNDOS_RESULT,
    BeginCompensationInput,
    BeginCompensationResult,
    CompensationWorkflowInput,
    FailOrderInput,
    FailOrderResult,
    FinishCompensationInput,
    RecordStepInput,
    RecordStepResult,
    ReleaseInventoryInput,
    ReleaseInventoryResult,
)
from scheduler.compensation_starter import compensation_input
from tests.orders.models.checks import assert_round_trips, wire_form_tests
from tests.support.records import CHARGE, RESERVE, entry

NOW = datetime(2030, 1, 1, tzinfo=UTC)
PAID = {"paymentId": "pay_1", "orderId": "ORD-1", "amount": "20.00", "currency": "USD",
        "status": "captured"}

WIRE_FORMS = [
    (CompensationWorkflowInput, {"orderId": "ORD-1", "workflowVersion": 1, "deadlineS": 20.0,
                                 "agentMaxAttempts": 3}),
    (CompensationWorkflowInput, {"orderId": "ORD-1", "workflowVersion": 9,
                                 "compensationVersion": 2, "deadlineS": 20.0,
                                 "agentMaxAttempts": 3}),
    (RecordStepInput, {"orderId": "ORD-1", "instanceId": "ORD-1:1", "workflowVersion": 1,
                       "step": "charge", "result": PAID}),
    (RecordStepInput, {"orderId": "ORD-1", "instanceId": "ORD-1:comp:1", "workflowVersion": 1,
                       "step": "refund", "result": None, "outcome": "NothingToUndo"}),
    (RecordStepResult, {"seq": 2, "created": False}),
    (FailOrderInput, {"orderId": "ORD-1", "instanceId": "ORD-1:1",
                      "reason": "attempt ORD-1:1: charge failed permanently: declined"}),
    (FailOrderResult, {"fenced": False, "state": "Compensating"}),
    (FailOrderResult, {"fenced": True, "state": None}),
    (BeginCompensationInput, {"orderId": "ORD-1", "instanceId": "ORD-1:comp:1",
                              "completeBy": "2030-01-01T00:00:20.000000Z"}),
    (BeginCompensationResult, {"fenced": False, "replyTo": "replies-acme",
                               "failureReason": "declined"}),
    (BeginCompensationResult, {"fenced": True, "replyTo": None, "failureReason": None}),
    (ReleaseInventoryInput, {"orderId": "ORD-1", "reservationId": "RES-ORD-1"}),
    (ReleaseInventoryResult, {"reservationId": "RES-ORD-1"}),
    (FinishCompensationInput, {"orderId": "ORD-1", "instanceId": "ORD-1:comp:1",
                               "state": "CompensationFailed"}),
    (COMPENSATION_OUTCOME, {"outcome": "compensated", "detail": "undone: nothing"}),
    (COMPENSATION_OUTCOME, {"outcome": "compensationFailed", "detail": "refund refused"}),
    (COMPENSATION_OUTCOME, {"outcome": "superseded"}),
    (COMPENSATION_OUTCOME, {"outcome": "timedOut", "step": "refund"}),
]


test_each_contract_round_trips_its_wire_form, test_a_misspelt_key_is_refused = (
    wire_form_tests(WIRE_FORMS, "CompensationOutcome"))


def test_pending_undos_round_trip_the_log_entries():
    logged = [entry(CHARGE, NOW, seq=2).model_dump(mode="json"),
              entry(RESERVE, NOW, seq=1).model_dump(mode="json")]
    assert_round_trips(PENDING_UNDOS_RESULT, logged)
    assert_round_trips(PENDING_UNDOS_RESULT, [])


def test_a_forward_step_is_recorded_without_an_outcome_key():
    # The order workflow has always sent record_step without "outcome"; it still does.
    forward = RecordStepInput.model_validate({
        "orderId": "ORD-1", "instanceId": "ORD-1:1", "workflowVersion": 1,
        "step": "reserve_inventory",
        "result": {"reservationId": "RES-ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}})
    assert forward.outcome is None
    assert "outcome" not in forward.model_dump(mode="json")


def test_an_entry_logged_before_requests_were_logged_still_loads():
    # X6: compensation schema 1 entries (no *_requested steps) are still in logs.
    old = entry(RESERVE, NOW, seq=1).model_copy(update={"schema_version": 1})
    (loaded,) = PENDING_UNDOS_RESULT.validate_python([old.model_dump(mode="json")])
    assert loaded.schema_version == 1 and loaded.details.reservation_id == "RES-ORD-1"


def test_an_undo_outcome_must_be_known():
    with pytest.raises(ValidationError, match="outcome"):
        RecordStepInput.model_validate({
            "orderId": "ORD-1", "instanceId": "ORD-1:comp:1", "workflowVersion": 1,
            "step": "refund", "result": None, "outcome": "Refunded"})


def test_the_compensation_starters_input_is_a_compensation_workflow_input(services):
    record = StateRecord.new("ORD-1", "replies-acme", NOW, workflow_version=2)
    started = compensation_input(record, services.settings)
    assert CompensationWorkflowInput.model_validate(started).model_dump(mode="json") == started
    assert started == {"orderId": "ORD-1", "workflowVersion": 2, "compensationVersion": 2,
                       "deadlineS": 20.0, "agentMaxAttempts": 3}
