"""Compensation end to end (S9): undo in reverse order, failures, stalls, give-ups."""

import json

from simulator.config import FaultUpdate
from tests.e2e.checks import assert_timer_won_and_late_reply_changed_nothing
from tests.e2e.harness import ProcessState, key, make_order

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}


def steps(system, order_id):
    return [(e.seq, e.step.value)
            for e in system.services.stores.compensation.entries(key(order_id))]


def statuses(system, order_id):
    return [m["status"] for m in system.replies() if m["orderId"] == order_id]


def test_shipping_declined_after_payment_refunds_then_releases(make_system):
    order = make_order(41)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}})
    system.submit(order)
    system.run(20)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.COMPENSATED
    assert (record.failure_count, record.compensation_attempt) == (0, 1)
    assert record.locked_by == f"{key(order)}:comp:1"
    assert "ship failed permanently" in record.failure_reason
    # Reserved, charged, shipment requested (declined); undone newest first: the shipment
    # request (the service answers nothing_to_undo), the charge, the reservation.
    assert steps(system, order.order_id) == [
        (1, "reserve_inventory"), (2, "charge_requested"), (3, "charge"),
        (4, "ship_requested"), (5, "cancel_shipment"), (6, "refund"),
        (7, "release_inventory")]
    assert system.effects(kind="cancel", order_id=order.order_id) == []
    charges = system.effects(kind="charge", order_id=order.order_id)
    refunds = system.effects(kind="refund", order_id=order.order_id)
    assert len(charges) == 1 and len(refunds) == 1
    assert refunds[0].ref_id == charges[0].resource_id
    assert refunds[0].amount == charges[0].amount == str(order.total_price)
    assert system.effects(kind="ship", order_id=order.order_id) == []
    assert statuses(system, order.order_id) == ["RequestReceived", "Compensated"]
    final = system.replies()[-1]
    assert "address_undeliverable" in final["reason"] and "refund (Undone)" in final["reason"]
    assert "cancel_shipment (NothingToUndo)" in final["reason"]
    assert [a["kind"] for a in system.alerts()] == ["OrderError"]
    comp = system.host.taskhub.get_instance(f"{key(order)}:comp:1")
    assert comp.runtime_status == "Completed" and json.loads(comp.output)["outcome"] == \
        "compensated"


def test_log_entries_carry_classification_and_retention(make_system):
    order = make_order(42)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}})
    system.submit(order)
    system.run(20)
    entries = {e.step.value: e for e in system.services.stores.compensation.entries(key(order))}
    assert entries["charge"].classification.value == "Restricted"
    assert entries["charge"].retention_days == 540
    assert entries["reserve_inventory"].classification.value == "Confidential"
    assert entries["release_inventory"].classification.value == "Internal"
    stored = entries["charge"].model_dump(mode="json")
    assert set(stored["details"]) == {"step", "paymentId", "amount", "currency"}


def test_refund_refused_ends_compensation_failed_alerted_and_findable(make_system):
    order = make_order(43)
    system = make_system()
    system.submit(order)
    with system.paused("shipping-requests"):
        system.run(1.5)  # charged; the shipment request waits
        assert len(system.effects(kind="charge", order_id=order.order_id)) == 1
        system.sim_app.state.faults.update(FaultUpdate.model_validate({
            "payment": {"decline": {key(order): {"status": 402,
                                                     "reason": "refund_not_allowed"}},
                        "order_fault_operations": ["refund"]},
            "shipping": {"decline": {key(order): SHIP_DECLINE}}}))
    system.run(20)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.COMPENSATION_FAILED
    # Stops at the refused refund: the reservation stays for the operator to decide.
    assert steps(system, order.order_id) == [
        (1, "reserve_inventory"), (2, "charge_requested"), (3, "charge"),
        (4, "ship_requested"), (5, "cancel_shipment")]
    assert system.effects(kind="refund", order_id=order.order_id) == []
    alerts = system.alerts()
    assert [a["kind"] for a in alerts] == ["OrderError", "CompensationFailed"]
    assert "refund refused: 402" in alerts[1]["reason"]
    assert alerts[1]["instanceId"] == f"{key(order)}:comp:1"
    assert statuses(system, order.order_id) == ["RequestReceived", "CompensationFailed"]
    states = system.services.stores.states
    assert states.count_by_state([ProcessState.COMPENSATION_FAILED]) == {
        ProcessState.COMPENSATION_FAILED: 1}
    page = states.find_by_state(ProcessState.COMPENSATION_FAILED, 10)
    assert [r.order_key for r in page.records] == [key(order)]


def test_stalled_compensation_is_resumed_by_the_supervisor_and_finishes(make_system):
    order = make_order(44)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}})
    system.submit(order)
    with system.paused("shipping-requests"):
        system.run(1.5)  # charged; the shipment request waits
    with system.paused("payment-requests"):
        system.run(3)  # ship declined, handed over, compensation 1 sent its refund request
        assert system.state(order.order_id).process_state == ProcessState.COMPENSATING
        held = system.engine.receive("payment-requests", 1, lock_owner="crashed-agent")
    assert [m.message_id for m in held] == [f"{key(order)}:comp:1:refund"]
    # The agent holding the refund died: compensation 1's timer at CompleteBy wins.
    system.run(32)
    record = system.state(order.order_id)
    assert record.compensation_failures == 1
    system.run(20)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.COMPENSATED
    assert (record.compensation_attempt, record.compensation_failures) == (2, 1)
    assert record.failure_count == 0
    # The held request is redelivered after its lock expires; its reply comes too late.
    assert_timer_won_and_late_reply_changed_nothing(system, f"{key(order)}:comp:1", record,
                                                    "refund", 90)
    assert steps(system, order.order_id)[-2:] == [(6, "refund"), (7, "release_inventory")]
    assert statuses(system, order.order_id) == ["RequestReceived", "Compensated"]


def test_compensation_that_keeps_stalling_fails_after_its_own_budget(make_system):
    order = make_order(45)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}},
                         settings={"MAX_COMPENSATION_FAILURES": "2",
                                   "AGENT_MAX_ATTEMPTS": "2", "AGENT_CALL_TIMEOUT_S": "0.2"})
    system.submit(order)
    with system.paused("shipping-requests"):
        system.run(1.5)  # charged; now the payment service stops answering
        system.sim_app.state.faults.update(FaultUpdate.model_validate({
            "payment": {"black_hole_order_ids": [key(order)],
                        "order_fault_operations": ["refund"]},
            "shipping": {"decline": {key(order): SHIP_DECLINE}}}))
    system.run(200)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.COMPENSATION_FAILED
    assert (record.compensation_attempt, record.compensation_failures) == (2, 2)
    assert record.failure_count == 0  # the order's own budget is untouched
    alerts = system.alerts()
    assert [a["kind"] for a in alerts] == ["OrderError", "CompensationFailed"]
    assert "MAX_COMPENSATION_FAILURES=2" in alerts[1]["reason"]
    assert statuses(system, order.order_id) == ["RequestReceived", "CompensationFailed"]
    assert system.effects(kind="refund", order_id=order.order_id) == []


def test_payment_failing_forever_is_given_up_then_compensated_with_an_alert(make_system):
    doomed = make_order(46)
    system = make_system(faults={"payment": {"fail_forever_order_ids": [key(doomed)]}},
                         settings={"AGENT_MAX_ATTEMPTS": "2"})
    others = [make_order(n) for n in range(60, 65)]
    for order in [doomed, *others]:
        system.submit(order)
    system.run(200)
    record = system.state(doomed.order_id)
    # The order failed (MAX_FAILURES). Its charge requests may have been carried out, so
    # the refund is asked for too: the service never charged (nothing_to_undo).
    assert record.process_state == ProcessState.COMPENSATED
    assert record.failure_count == 3 and "MAX_FAILURES=3" in record.failure_reason
    assert steps(system, doomed.order_id) == [(1, "reserve_inventory"),
                                              (2, "charge_requested"), (3, "refund"),
                                              (4, "release_inventory")]
    assert system.states(o.order_id for o in others) == {ProcessState.PROCESSED: 5}
    assert [(a["kind"], a["orderId"]) for a in system.alerts()] == [
        ("RetriesExhausted", key(doomed))]
    assert statuses(system, doomed.order_id) == ["RequestReceived", "Compensated"]
    assert system.effects(order_id=doomed.order_id) == []


def test_v2_declined_charge_cancels_the_shipment_then_releases(make_system):
    order = make_order(47)
    system = make_system(faults={"payment": {"decline": {key(order): {
        "status": 402, "reason": "card_declined"}}}}, settings={"WORKFLOW_VERSION": "2"})
    system.submit(order)
    system.run(20)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.COMPENSATED and record.workflow_version == 2
    assert steps(system, order.order_id) == [
        (1, "reserve_inventory"), (2, "ship_requested"), (3, "ship"), (4, "charge_requested"),
        (5, "refund"), (6, "cancel_shipment"), (7, "release_inventory")]
    kinds = [e.kind for e in system.effects(order_id=order.order_id)]
    assert kinds == ["ship", "cancel"]
