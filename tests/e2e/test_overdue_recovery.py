"""No order is forgotten: an attempt stuck longer than the supervisor's window (V1, V2, X8).

The order's attempt 1 "ran" two days ago and its host vanished; its record stayed
Processing with a CompleteBy far older than SUPERVISOR_SCAN_WINDOW_S (the supervisor was
not running). The running system's supervisor finds it anyway, recovers it like any
expired attempt, tells operators, and the next attempt completes the order. The record
is a legacy one, keyed on its plain OrderID with no client (from before client queues):
legacy records are recovered like any other (X6).
"""

from datetime import timedelta

from orders.models import Order, StateRecord
from tests.e2e.harness import ProcessState, make_order


def test_attempt_stuck_beyond_the_scan_window_is_recovered_with_an_alert(make_system):
    system = make_system(settings={"SUPERVISOR_SCAN_WINDOW_S": "3600"})
    order = make_order(31)
    stores = system.services.stores
    now = system.clock.now()
    stores.orders.create_if_absent(Order.of_client(order, order.order_id))  # a legacy key
    created = stores.states.create_if_absent(
        StateRecord.new(order.order_id, "replies-acme", now - timedelta(days=2))).record
    stores.states.replace(created.model_copy(update={
        "process_state": ProcessState.PROCESSING, "attempt": 1,
        "locked_by": f"{order.order_id}:1", "complete_by": now - timedelta(days=2)}))

    system.run(2.5)  # one supervisor pass (every 2 s)
    (alert,) = system.alerts()
    assert (alert["kind"], alert["orderId"], alert["instanceId"]) == \
        ("OverdueOrder", order.order_id, f"{order.order_id}:1")
    assert "passed 2d 00:00:0" in alert["reason"] and "recovered: retried" in alert["reason"]

    system.run(10)
    record = stores.states.get(order.order_id)  # a legacy record: keyed on its OrderID
    assert (record.process_state, record.attempt, record.failure_count) == \
        (ProcessState.PROCESSED, 2, 1)
    assert len(system.ledger.side_effects(kind="charge", order_key=order.order_id)) == 1
    assert [m["status"] for m in system.replies()] == ["OrderCompleted"]
