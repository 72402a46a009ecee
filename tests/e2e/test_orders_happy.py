"""Orders end to end without faults (issue acceptance: 200 orders, each effect once)."""

from collections import Counter

import pytest

from tests.e2e.harness import ProcessState, make_order


def test_one_order_is_processed_and_client_told(make_system):
    system = make_system()
    order = make_order(1)
    system.submit(order)
    system.run(10)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.PROCESSED
    assert record.attempt == 1 and record.failure_count == 0
    statuses = [m["status"] for m in system.replies()]
    assert statuses == ["RequestReceived", "OrderCompleted"]
    kinds = Counter(e.kind for e in system.effects(order_id=order.order_id))
    assert kinds == {"charge": 1, "ship": 1}


@pytest.mark.slow(expected_s=8)
def test_200_orders_all_processed_each_side_effect_exactly_once(make_system):
    system = make_system()
    orders = [make_order(n) for n in range(200)]
    for order in orders:
        system.submit(order)
    system.run(30)
    assert system.states(o.order_id for o in orders) == {ProcessState.PROCESSED: 200}
    counts = Counter((e.kind, e.order_key) for e in system.effects())
    assert len(counts) == 400
    assert set(counts.values()) == {1}


def test_two_clients_each_reply_queue_holds_only_its_own_orders(make_system):
    system = make_system()
    mine = [make_order(n) for n in range(5)]
    theirs = [make_order(n) for n in range(100, 107)]
    for order in mine:
        system.submit(order, client_id="acme")
    for order in theirs:
        system.submit(order, client_id="globex")
    system.run(20)
    acme = system.replies("acme")
    globex = system.replies("globex")
    assert {m["orderId"] for m in acme} == {o.order_id for o in mine}
    assert {m["orderId"] for m in globex} == {o.order_id for o in theirs}
    assert len(acme) == 2 * len(mine) and len(globex) == 2 * len(theirs)
