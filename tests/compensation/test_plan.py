"""Undo planning: reverse order, agent requests, what 404/409 mean (SPEC S9, A2)."""

from datetime import UTC, datetime, timedelta

import pytest

from orders.compensation.plan import (
    nothing_to_undo,
    pending_undos,
    step_details,
    undo_request,
    undo_step,
)
from orders.models import Step, UndoOutcome
from tests.compensation.helpers import CHARGE, RESERVE, SHIP, entry

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def logged(*details):
    return [entry(d, NOW + timedelta(seconds=i), seq=i + 1) for i, d in enumerate(details)]


def test_pending_undos_are_the_completed_steps_newest_first():
    log = logged(RESERVE, CHARGE, SHIP)
    assert [e.step for e in pending_undos(log)] == [Step.SHIP, Step.CHARGE,
                                                    Step.RESERVE_INVENTORY]
    assert [e.step for e in pending_undos(reversed(log))] == [Step.SHIP, Step.CHARGE,
                                                              Step.RESERVE_INVENTORY]


def test_pending_undos_skip_what_is_undone():
    log = logged(RESERVE, CHARGE, SHIP, {"step": "cancel_shipment", "outcome": "Undone",
                                         "shipmentId": "shp_1"},
                 {"step": "refund", "outcome": "NothingToUndo"})
    assert [e.step for e in pending_undos(log)] == [Step.RESERVE_INVENTORY]
    assert pending_undos([]) == []


def test_refund_request_has_stable_ids_across_compensation_attempts():
    charge = entry(CHARGE, NOW, seq=2).model_dump(mode="json")
    first = undo_request("ORD-1:comp:1", charge, NOW, 3)
    second = undo_request("ORD-1:comp:2", charge, NOW, 3)
    assert (first.service, first.operation) == ("payment", "refund")
    assert first.message_id == "ORD-1:comp:1:refund" != second.message_id
    assert first.idempotency_key == second.idempotency_key == "ORD-1:refund"
    assert first.event_name == "refund-reply" and first.instance_id == "ORD-1:comp:1"
    assert first.payload == {"orderId": "ORD-1", "paymentId": "pay_1", "amount": "20.00",
                             "currency": "USD"}


def test_cancel_request_and_local_release():
    shipped = entry(SHIP, NOW).model_dump(mode="json")
    cancel = undo_request("ORD-1:comp:1", shipped, NOW, 3)
    assert (cancel.service, cancel.operation) == ("shipping", "cancel_shipment")
    assert cancel.payload == {"orderId": "ORD-1", "shipmentId": "shp_1"}
    reserved = entry(RESERVE, NOW).model_dump(mode="json")
    assert undo_step(reserved) is Step.RELEASE_INVENTORY
    with pytest.raises(ValueError, match="undone locally"):
        undo_request("ORD-1:comp:1", reserved, NOW, 3)
    undo = entry({"step": "refund", "outcome": "Undone", "refundId": "re_1", "amount": "1",
                  "currency": "USD"}, NOW).model_dump(mode="json")
    with pytest.raises(ValueError, match="is an undo"):
        undo_step(undo)


@pytest.mark.parametrize(("outcome", "status", "expected"), [
    ("PermanentFailure", 404, True),
    ("PermanentFailure", 409, True),
    ("PermanentFailure", 402, False),
    ("PermanentFailure", 422, False),
    ("TransientFailure", 404, False),
    ("Succeeded", 200, False),
])
def test_only_a_permanent_404_or_409_means_nothing_to_undo(outcome, status, expected):
    assert nothing_to_undo({"outcome": outcome, "statusCode": status}) is expected


def test_step_details_keep_only_what_the_undo_needs():
    answer = {"paymentId": "pay_9", "orderId": "ORD-1", "amount": "5.00", "currency": "EUR",
              "status": "captured", "cardLast4": "4242", "customerEmail": "a@example.com"}
    assert step_details(Step.CHARGE, answer) == {
        "step": "charge", "paymentId": "pay_9", "amount": "5.00", "currency": "EUR"}
    assert step_details(Step.REFUND, None, UndoOutcome.NOTHING_TO_UNDO) == {
        "step": "refund", "outcome": "NothingToUndo"}
    assert step_details(Step.RELEASE_INVENTORY, {"reservationId": "RES-1"}) == {
        "step": "release_inventory", "reservationId": "RES-1", "outcome": "Undone"}
    with pytest.raises(KeyError):
        step_details(Step.SHIP, {"orderId": "ORD-1"})
