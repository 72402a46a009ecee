"""Undo planning: what may have happened, reverse order, agent requests (S9, A2, X6)."""

from datetime import UTC, datetime, timedelta

import pytest

from orders.compensation.plan import (
    nothing_to_undo,
    outcome_label,
    pending_undos,
    step_details,
    undo_request,
    undo_step,
)
from orders.models import CompensationEntry, Step, UndoOutcome
from orders.models.messages import AgentReply
from tests.support.records import CHARGE, RESERVE, SHIP, entry

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
    charge = entry(CHARGE, NOW, seq=2)
    first = undo_request("ORD-1:comp:1", charge, NOW, 3)
    second = undo_request("ORD-1:comp:2", charge, NOW, 3)
    assert (first.service, first.operation) == ("payment", "refund")
    assert first.message_id == "ORD-1:comp:1:refund" != second.message_id
    assert first.idempotency_key == second.idempotency_key == "ORD-1:refund"
    assert first.event_name == "refund-reply" and first.instance_id == "ORD-1:comp:1"
    assert first.payload == {"orderId": "ORD-1", "chargeKey": "ORD-1:charge",
                             "paymentId": "pay_1", "amount": "20.00", "currency": "USD"}


def test_cancel_request_and_local_release():
    shipped = entry(SHIP, NOW)
    cancel = undo_request("ORD-1:comp:1", shipped, NOW, 3)
    assert (cancel.service, cancel.operation) == ("shipping", "cancel_shipment")
    assert cancel.payload == {"orderId": "ORD-1", "shipmentKey": "ORD-1:ship",
                              "shipmentId": "shp_1"}
    reserved = entry(RESERVE, NOW)
    assert undo_step(reserved) is Step.RELEASE_INVENTORY
    with pytest.raises(ValueError, match="undone locally"):
        undo_request("ORD-1:comp:1", reserved, NOW, 3)
    undo = entry({"step": "refund", "outcome": "Undone", "refundId": "re_1", "amount": "1",
                  "currency": "USD"}, NOW)
    with pytest.raises(ValueError, match="is an undo"):
        undo_step(undo)


@pytest.mark.parametrize(("outcome", "status", "code", "expected"), [
    ("PermanentFailure", 409, "nothing_to_undo", True),
    ("PermanentFailure", 409, "already_undone", True),
    ("PermanentFailure", 404, None, False),  # a bare 404: maybe the wrong URL, not "never done"
    ("PermanentFailure", 404, "not_found", False),
    ("PermanentFailure", 409, None, False),
    ("PermanentFailure", 402, "card_declined", False),
    ("TransientFailure", 503, "nothing_to_undo", False),
    ("Succeeded", 200, None, False),
])
def test_only_the_services_nothing_to_undo_code_means_nothing_to_undo(outcome, status, code,
                                                                       expected):
    reply = {"messageId": "ORD-1:comp:1:refund:reply", "orderId": "ORD-1",
             "instanceId": "ORD-1:comp:1", "operation": "refund", "eventName": "refund-reply",
             "outcome": outcome, "attempts": 1, "statusCode": status}
    assert nothing_to_undo(AgentReply.model_validate({**reply, "errorCode": code})) is expected
    # Replies written before errorCode existed never mean "nothing to undo".
    assert nothing_to_undo(AgentReply.model_validate(reply)) is False
    # Logs and traces name the answer as the operator should read it.
    label = outcome_label(AgentReply.model_validate({**reply, "errorCode": code}))
    assert label == ("NothingToUndo" if expected else outcome)


CHARGE_REQUESTED = {"step": "charge_requested", "idempotencyKey": "ORD-1:charge",
                    "amount": "20.00", "currency": "USD"}
SHIP_REQUESTED = {"step": "ship_requested", "idempotencyKey": "ORD-1:ship"}


def test_a_request_without_an_answer_is_undone_too():
    # The charge went out and no answer came: the refund must still be sent.
    log = logged(RESERVE, CHARGE_REQUESTED)
    pending = pending_undos(log)
    assert [e.step for e in pending] == [Step.CHARGE_REQUESTED, Step.RESERVE_INVENTORY]
    refund = undo_request("ORD-1:comp:1", pending[0], NOW, 3)
    assert (refund.operation, refund.idempotency_key) == ("refund", "ORD-1:refund")
    assert refund.payload == {"orderId": "ORD-1", "chargeKey": "ORD-1:charge"}


def test_a_confirmed_step_is_undone_once_with_what_the_service_returned():
    log = logged(RESERVE, CHARGE_REQUESTED, CHARGE, SHIP_REQUESTED)
    pending = pending_undos(log)
    # Newest request first: the unanswered shipment, then the confirmed charge, then stock.
    assert [e.step for e in pending] == [Step.SHIP_REQUESTED, Step.CHARGE,
                                         Step.RESERVE_INVENTORY]
    assert pending[1].details.payment_id == "pay_1"
    undone = logged(RESERVE, CHARGE_REQUESTED, CHARGE, SHIP_REQUESTED,
                    {"step": "cancel_shipment", "outcome": "NothingToUndo"},
                    {"step": "refund", "outcome": "Undone", "refundId": "re_1",
                     "amount": "20.00", "currency": "USD"})
    assert [e.step for e in pending_undos(undone)] == [Step.RESERVE_INVENTORY]


def test_requested_entries_are_classified_like_what_they_track():
    charge = entry(CHARGE_REQUESTED, NOW)
    assert charge.classification.value == "Restricted" and charge.retention_days == 540
    ship = entry(SHIP_REQUESTED, NOW)
    assert ship.classification.value == "Internal"


def legacy(details, seq, version=1):
    made = CompensationEntry.new("ORD-1", details, instance_id="ORD-1:1", workflow_version=version,
                                 now=NOW + timedelta(seconds=seq))
    return made.model_copy(update={"seq": seq, "schema_version": 1})


@pytest.mark.parametrize(("version", "expected"), [
    (1, [Step.SHIP_REQUESTED, Step.CHARGE_REQUESTED, Step.RESERVE_INVENTORY]),
    (2, [Step.CHARGE_REQUESTED, Step.SHIP_REQUESTED, Step.RESERVE_INVENTORY]),
])
def test_an_order_logged_before_requests_were_logged_probes_every_remote_step(version,
                                                                              expected):
    # X6: its log cannot tell whether a request went out, so every remote step of its
    # workflow version is undone; the service answers nothing_to_undo where none happened.
    pending = pending_undos([legacy(RESERVE, 1, version)])
    assert [e.step for e in pending] == expected
    keys = {e.details.idempotency_key for e in pending if e.step is not Step.RESERVE_INVENTORY}
    assert keys == {"ORD-1:charge", "ORD-1:ship"}


def test_an_old_order_with_a_confirmed_charge_probes_only_the_shipment():
    pending = pending_undos([legacy(RESERVE, 1), legacy(CHARGE, 2)])
    assert [e.step for e in pending] == [Step.SHIP_REQUESTED, Step.CHARGE,
                                         Step.RESERVE_INVENTORY]
    assert [e.step for e in pending_undos([legacy(RESERVE, 1), legacy(CHARGE, 2),
                                           legacy(SHIP, 3)])] == [
        Step.SHIP, Step.CHARGE, Step.RESERVE_INVENTORY]


def test_an_undo_request_names_the_forward_request_by_its_key():
    requested = entry(SHIP_REQUESTED, NOW)
    assert undo_step(requested) is Step.CANCEL_SHIPMENT
    cancel = undo_request("ORD-1:comp:2", requested, NOW, 3)
    assert cancel.payload == {"orderId": "ORD-1", "shipmentKey": "ORD-1:ship"}


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
