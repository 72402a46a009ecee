"""Money balances: what may have happened is undone, and data never steers a request (S9).

A request that went out without an answer may have been carried out. Each test puts a
side effect where the workflow cannot see it (performed, answer lost) and checks the
simulator's ledger: an order that does not complete ends with net zero charges and
shipments, or in CompensationFailed with an operator alert.
"""

import json
from decimal import Decimal

import pytest

from simulator.config import FaultUpdate
from tests.e2e.harness import ProcessState, key, make_order
from tests.e2e.test_circuit_isolation import no_two_in_one_window

FAST_GIVE_UP = {"AGENT_MAX_ATTEMPTS": "2", "AGENT_CALL_TIMEOUT_S": "0.2",
                # Keep the breaker out of it: these tests are about one order's own fault.
                "CIRCUIT_FAILURE_THRESHOLD": "1000"}
SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}


def net(system, order_id, kind, undo):
    """Forward effects minus the undos that name them, for one order."""
    done = system.effects(kind=kind, order_id=order_id)
    undone = {e.ref_id for e in system.effects(kind=undo, order_id=order_id)}
    return len([e for e in done if e.resource_id not in undone])


def statuses(system, order_id):
    return [(m["status"], m.get("reason") or "") for m in system.replies()
            if m["orderId"] == order_id]


@pytest.mark.slow(expected_s=8)
def test_charges_performed_but_never_answered_are_refunded(make_system):
    doomed = [make_order(n) for n in range(100, 105)]
    healthy = [make_order(n) for n in range(110, 115)]
    ids = [o.order_id for o in doomed]
    system = make_system(faults={"payment": {"black_hole_order_ids": [key(i) for i in ids],
                                             "black_hole_performs_effect": True}},
                         settings=FAST_GIVE_UP)
    for order in [*doomed, *healthy]:
        system.submit(order)
    system.run(300)
    assert system.states(ids) == {ProcessState.COMPENSATED: 5}
    assert system.states(o.order_id for o in healthy) == {ProcessState.PROCESSED: 5}
    for order in doomed:
        charges = system.effects(kind="charge", order_id=order.order_id)
        refunds = system.effects(kind="refund", order_id=order.order_id)
        assert len(charges) == 1, "every attempt sent the same idempotency key"
        assert [(r.ref_id, Decimal(r.amount)) for r in refunds] == [
            (charges[0].resource_id, order.total_price)]
        [(final, reason)] = statuses(system, order.order_id)[1:]
        assert final == "Compensated" and "refund (Undone)" in reason
    # Collapsed per client, kind and 10 minutes (X10): each alert names a doomed order.
    alerts = system.alerts()
    assert alerts and {(a["kind"], a["clientId"]) for a in alerts} == {
        ("RetriesExhausted", "acme")}
    assert {a["orderId"] for a in alerts} <= {key(i) for i in ids}
    assert no_two_in_one_window(alerts)


def test_a_request_lost_before_it_was_carried_out_is_answered_nothing_to_undo(make_system):
    order = make_order(120)
    system = make_system(faults={"payment": {"black_hole_order_ids": [key(order)]}},
                         settings=FAST_GIVE_UP)
    system.submit(order)
    system.run(300)
    assert system.state(order.order_id).process_state == ProcessState.COMPENSATED
    assert system.effects(order_id=order.order_id) == []
    entries = system.services.stores.compensation.entries(key(order))
    refund = next(e for e in entries if e.step.value == "refund")
    assert refund.details.outcome.value == "NothingToUndo"
    assert system.ledger.request_count("payment", key(order), "refund") == 1


def test_a_shipment_performed_but_never_answered_is_cancelled_and_the_charge_refunded(
        make_system):
    order = make_order(121)
    system = make_system(faults={"shipping": {"black_hole_order_ids": [key(order)],
                                              "black_hole_performs_effect": True}},
                         settings=FAST_GIVE_UP)
    system.submit(order)
    system.run(300)
    assert system.state(order.order_id).process_state == ProcessState.COMPENSATED
    assert len(system.effects(kind="ship", order_id=order.order_id)) == 1
    assert net(system, order.order_id, "ship", "cancel") == 0
    assert net(system, order.order_id, "charge", "refund") == 0
    steps = [e.step.value for e in system.services.stores.compensation.entries(key(order))]
    assert steps[-3:] == ["cancel_shipment", "refund", "release_inventory"]


@pytest.mark.slow(expected_s=6)
def test_an_undo_that_is_never_answered_ends_compensation_failed_with_an_alert(make_system):
    order = make_order(122)
    system = make_system(faults={"payment": {
        "black_hole_order_ids": [key(order)], "black_hole_performs_effect": True,
        "order_fault_operations": ["charge", "refund"]}}, settings=FAST_GIVE_UP)
    system.submit(order)
    system.run(600)
    record = system.state(order.order_id)
    # The refund may have happened (here it did): nobody can tell, so an operator must.
    assert record.process_state == ProcessState.COMPENSATION_FAILED
    assert [a["kind"] for a in system.alerts()] == ["RetriesExhausted", "CompensationFailed"]
    assert statuses(system, order.order_id)[-1][0] == "CompensationFailed"


def test_a_late_charge_after_the_timer_won_is_refunded_when_the_order_is_undone(make_system):
    # Attempt 1's charge request is held by an agent that crashed; the timer wins. The
    # shipment is then declined for good: the order is compensated while the held charge
    # request may still be carried out. The refund is asked for in any case.
    order = make_order(123)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}})
    system.submit(order)
    with system.paused("payment-requests"):
        system.run(1.5)
        held = system.engine.receive("payment-requests", 1, lock_owner="crashed-agent")
    assert [m.message_id for m in held] == [f"{key(order)}:1:charge"]
    system.run(200)
    assert system.state(order.order_id).process_state == ProcessState.COMPENSATED
    assert net(system, order.order_id, "charge", "refund") == 0
    assert net(system, order.order_id, "ship", "cancel") == 0


def submit_raw(system, order, order_id, message_id):
    body = json.loads(order.model_dump_json(by_alias=True))
    body["orderId"] = order_id
    system.engine.send("orders-acme", json.dumps({"clientId": "acme", "replyTo": "replies-acme",
                                                   "order": body}), message_id=message_id)


@pytest.mark.parametrize("order_id", [".", "..", "..."])
def test_order_ids_made_of_dots_are_refused_at_submission(make_system, order_id):
    system = make_system()
    submit_raw(system, make_order(130), order_id, "dots")
    system.run(5)
    [dead] = system.engine.peek("orders-acme", 10, dead_letter=True)
    assert dead.dead_letter_reason == "SchemaViolation"
    assert "order.orderId" in dead.dead_letter_error_description
    assert "dots only" in dead.dead_letter_error_description
    assert sum(system.services.stores.states.count_by_state().values()) == 0


def test_order_ids_with_dots_go_through_the_whole_pipeline_and_are_undone(make_system):
    # The forms that once turned a refund into a request for another URL: each order is
    # charged, its shipment declined, and the refund reaches its own charge.
    ids = ["..a", "a..b", "a.", ".-_.", "_..", "-"]
    orders = {i: make_order(140 + n).model_copy(update={"order_id": i})
              for n, i in enumerate(ids)}
    system = make_system(faults={"shipping": {"decline": {key(i): SHIP_DECLINE for i in ids}}})
    for i, order in orders.items():
        system.submit(order, message_id=f"m-{i}")
    system.run(60)
    assert system.states(ids) == {ProcessState.COMPENSATED: len(ids)}
    for i, order in orders.items():
        [charge] = system.effects(kind="charge", order_id=i)
        [refund] = system.effects(kind="refund", order_id=i)
        assert (refund.ref_id, Decimal(refund.amount)) == (charge.resource_id,
                                                           order.total_price)
    assert system.alerts() and all(a["kind"] == "OrderError" for a in system.alerts())


def test_a_refund_the_service_refuses_is_never_taken_for_nothing_to_undo(make_system):
    # A 404 from the service (here: a refund it refuses with 404) is not "nothing to undo":
    # only the service's own nothing_to_undo code is. The order ends CompensationFailed.
    order = make_order(150)
    system = make_system()
    system.submit(order)
    with system.paused("shipping-requests"):
        system.run(1.5)
        system.sim_app.state.faults.update(FaultUpdate.model_validate({
            "payment": {"decline": {key(order): {"status": 422, "reason": "not_found"}},
                        "order_fault_operations": ["refund"]},
            "shipping": {"decline": {key(order): SHIP_DECLINE}}}))
    system.run(30)
    assert system.state(order.order_id).process_state == ProcessState.COMPENSATION_FAILED
    assert net(system, order.order_id, "charge", "refund") == 1
    assert [a["kind"] for a in system.alerts()] == ["OrderError", "CompensationFailed"]
