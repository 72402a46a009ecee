"""Contracts of the order workflow (S5-S7, X6): wire forms, old forms, misspelt keys."""

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from orders.models import StateRecord
from orders.models.attempt_io import (
    ATTEMPT_OUTCOME,
    BeginAttemptInput,
    BeginAttemptResult,
    FencedResult,
    FinishAttemptInput,
    OrderWorkflowInput,
    ReserveInventoryInput,
    ReserveInventoryResult,
)
from scheduler.starter import workflow_input
from tests.orders.models.checks import wire_form_tests

LINE = {"sku": "SKU-A", "quantity": 2, "unitPrice": "10.00", "discount": "0", "tax": "0"}

WIRE_FORMS = [
    (OrderWorkflowInput, {"orderId": "ORD-1", "attempt": 2, "workflowVersion": 2,
                          "deadlineS": 30.0, "agentMaxAttempts": 4}),
    (BeginAttemptInput, {"orderId": "ORD-1", "instanceId": "ORD-1:2",
                         "completeBy": "2030-01-01T00:00:30.000000Z"}),
    (BeginAttemptResult, {"fenced": False, "replyTo": "replies-acme"}),
    (BeginAttemptResult, {"fenced": True, "replyTo": None}),
    (ReserveInventoryInput, {"orderId": "ORD-1", "lines": [LINE]}),
    (ReserveInventoryResult, {"reservationId": "RES-ORD-1",
                              "lines": [{"sku": "SKU-A", "quantity": 2}]}),
    (FinishAttemptInput, {"orderId": "ORD-1", "instanceId": "ORD-1:2", "state": "Processed"}),
    (FencedResult, {"fenced": True}),
    (ATTEMPT_OUTCOME, {"outcome": "processed"}),
    (ATTEMPT_OUTCOME, {"outcome": "superseded"}),
    (ATTEMPT_OUTCOME, {"outcome": "timedOut", "step": "charge"}),
    (ATTEMPT_OUTCOME, {"outcome": "transientFailure", "step": "ship"}),
    (ATTEMPT_OUTCOME, {"outcome": "error", "step": "charge", "reason": "card declined"}),
    (ATTEMPT_OUTCOME, {"outcome": "compensating", "step": "ship", "reason": None}),
    (ATTEMPT_OUTCOME, {"outcome": "unknownWorkflowVersion"}),
]


test_each_contract_round_trips_its_wire_form, test_a_misspelt_key_is_refused = (
    wire_form_tests(WIRE_FORMS, "AttemptOutcome"))


def test_a_misspelt_optional_key_is_refused_instead_of_defaulting():
    # Without extra="forbid" this input would run an order started under v2 as v1.
    with pytest.raises(ValidationError, match="workflowversion"):
        OrderWorkflowInput.model_validate({"orderId": "ORD-1", "workflowversion": 2,
                                           "deadlineS": 30.0, "agentMaxAttempts": 4})


def test_an_input_recorded_before_workflow_versions_loads_as_version_1():
    old = OrderWorkflowInput.model_validate({"orderId": "ORD-1", "deadlineS": 30.0,
                                             "agentMaxAttempts": 4})
    assert (old.workflow_version, old.attempt) == (1, None)
    assert old.model_dump(mode="json") == {"orderId": "ORD-1", "workflowVersion": 1,
                                           "deadlineS": 30.0, "agentMaxAttempts": 4}


def test_the_starters_input_is_an_order_workflow_input(services):
    record = StateRecord.new("ORD-1", "replies-acme", datetime(2030, 1, 1, tzinfo=UTC),
                             workflow_version=2).model_copy(update={"attempt": 3})
    started = workflow_input(record, services)
    assert OrderWorkflowInput.model_validate(started).model_dump(mode="json") == started
    assert started == {"orderId": "ORD-1", "attempt": 3, "workflowVersion": 2,
                       "deadlineS": 30.0, "agentMaxAttempts": 3}


def test_the_starters_input_carries_the_attempts_trace_context_from_the_contract(services):
    parent = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    record = StateRecord.new("ORD-1", "replies-acme", datetime(2030, 1, 1, tzinfo=UTC),
                             workflow_version=9).model_copy(
        update={"attempt": 1, "attempt_trace": parent})
    started = workflow_input(record, services)
    assert started == {"orderId": "ORD-1", "attempt": 1, "workflowVersion": 9,
                       "deadlineS": 30.0, "agentMaxAttempts": 3, "traceParent": parent}
    assert OrderWorkflowInput.model_validate(started).trace_parent == parent


def test_begin_attempt_must_name_the_reply_queue_unless_fenced():
    with pytest.raises(ValidationError, match="replyTo: required"):
        BeginAttemptResult.model_validate({"fenced": False, "replyTo": None})


def test_finish_attempt_writes_only_processed():
    # Before compensation existed, finish_attempt also wrote Error; such an input is refused
    # as it has been since (failures go through fail_order).
    with pytest.raises(ValidationError, match="'Processed'"):
        FinishAttemptInput.model_validate({"orderId": "ORD-1", "instanceId": "ORD-1:1",
                                           "state": "Error"})


def test_complete_by_travels_as_fixed_width_utc():
    begin = BeginAttemptInput(order_key="ORD-1", instance_id="ORD-1:1",
                              complete_by=datetime(2030, 1, 1, 1, 0, 30, tzinfo=UTC))
    assert begin.model_dump(mode="json")["completeBy"] == "2030-01-01T01:00:30.000000Z"
