"""Compensation activities with real SQLite stores: idempotent, fenced (S4, S9, X7)."""

from datetime import timedelta

from activities import compensation_steps as steps
from activities.steps import finish_attempt
from orders.lifecycle.changes import claim_compensation, hand_over
from orders.lifecycle.transitions import Actor
from orders.models import ProcessState
from tests.support.records import CHARGE, RESERVE, entry, record_in


def record(services, step, result, instance_id="ORD-1:1", outcome=None):
    data = {"orderId": "ORD-1", "instanceId": instance_id, "workflowVersion": 1,
            "step": step, "result": result}
    if outcome:
        data["outcome"] = outcome
    return steps.record_step(data, services)


def test_record_step_writes_once_and_keeps_only_the_undo_fields(services, stores):
    answer = {"paymentId": "pay_1", "orderId": "ORD-1", "amount": "20.00", "currency": "USD",
              "status": "captured", "cardLast4": "4242"}
    reservation = {"reservationId": "RES-ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}
    assert record(services, "reserve_inventory", reservation) == {
        "seq": 1, "created": True}
    assert record(services, "charge", answer) == {"seq": 2, "created": True}
    assert record(services, "charge", answer) == {"seq": 2, "created": False}  # a rerun
    (_, charge) = stores.compensation.entries("ORD-1")
    assert charge.details.model_dump(mode="json") == CHARGE
    assert charge.instance_id == "ORD-1:1"


def test_fail_order_hands_over_when_something_is_to_undo(services, stores, clock):
    record_in(stores.states, clock)
    stores.compensation.record(entry(RESERVE, clock.now()))
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "reason": "attempt ORD-1:1: no"}
    assert steps.fail_order(data, services) == {"fenced": False, "state": "Compensating"}
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.COMPENSATING and stored.locked_by is None
    assert stored.failure_reason == "attempt ORD-1:1: no"
    # A rerun of the same activity finds its own hand-over and answers the same.
    assert steps.fail_order(data, services) == {"fenced": False, "state": "Compensating"}
    assert stores.states.get("ORD-1") == stored
    # Another (stale) attempt is fenced.
    stale = {**data, "instanceId": "ORD-1:0", "reason": "other"}
    assert steps.fail_order(stale, services) == {"fenced": True, "state": None}


def test_fail_order_sets_error_when_nothing_is_to_undo(services, stores, clock):
    record_in(stores.states, clock)
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "reason": "attempt ORD-1:1: no"}
    assert steps.fail_order(data, services) == {"fenced": False, "state": "Error"}
    stored = stores.states.get("ORD-1")
    # CompleteBy: the deadline of telling the client, until publish_status noted it (S8).
    assert stored.process_state is ProcessState.ERROR
    assert stored.complete_by == clock.now() + services.settings.status_grace


def test_stale_attempt_cannot_finish_a_record_the_supervisor_gave_up_on(services, stores,
                                                                      clock):
    # The supervisor sets Error and keeps the stale LockedBy; the attempt must not write.
    record_in(stores.states, clock, ProcessState.ERROR)
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Processed"}
    assert finish_attempt(data, services) == {"fenced": True}
    assert stores.states.get("ORD-1").process_state is ProcessState.ERROR


def test_finish_attempt_rerun_is_not_fenced(services, stores, clock):
    record_in(stores.states, clock)
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Processed"}
    assert finish_attempt(data, services) == {"fenced": False}
    assert finish_attempt(data, services) == {"fenced": False}


def test_compensation_attempt_owns_the_record_only_while_it_holds_lockedby(services, stores,
                                                                         clock):
    handed = stores.states.replace(hand_over(record_in(stores.states, clock), "why",
                                             Actor.SUPERVISOR))
    claimed = stores.states.replace(claim_compensation(handed, clock.now() + timedelta(seconds=60)))
    begin = {"orderId": "ORD-1", "instanceId": "ORD-1:comp:1",
             "completeBy": "2030-01-01T00:00:20.000000Z"}
    assert steps.begin_compensation({**begin, "instanceId": "ORD-1:comp:9"}, services) == {
        "fenced": True, "replyTo": None, "failureReason": None}
    assert steps.begin_compensation(begin, services) == {
        "fenced": False, "replyTo": "replies-acme", "failureReason": "why"}
    assert stores.states.get("ORD-1").complete_by.isoformat().startswith("2030-01-01T00:00:20")
    finish = {"orderId": "ORD-1", "instanceId": claimed.locked_by, "state": "Compensated"}
    assert steps.finish_compensation(finish, services) == {"fenced": False}
    assert steps.finish_compensation(finish, services) == {"fenced": False}  # a rerun
    assert steps.finish_compensation({**finish, "instanceId": "ORD-1:comp:2"},
                                     services) == {"fenced": True}
    done = stores.states.get("ORD-1")
    assert done.process_state is ProcessState.COMPENSATED
    assert done.complete_by == clock.now() + services.settings.status_grace


def test_pending_undo_entries_are_json_newest_first(services, stores, clock):
    stores.compensation.record(entry(RESERVE, clock.now()))
    stores.compensation.record(entry(CHARGE, clock.now()))
    pending = steps.pending_undo_entries("ORD-1", services)
    assert [e["details"]["step"] for e in pending] == ["charge", "reserve_inventory"]
    assert steps.release_inventory({"orderId": "ORD-1", "reservationId": "RES-ORD-1"},
                                   services) == {"reservationId": "RES-ORD-1", "released": []}
