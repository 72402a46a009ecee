"""One client's large orders of one SKU cannot starve another client's order of it.

Four orders of 1,000 lines of one SKU at 0.01 are refused by the order size bound; four
of the largest allowed size (50 lines of that SKU) and another client's one-line order of
it, sent meanwhile, are all Processed on their first attempt; nothing ends
CompensationFailed, and the SKU's item holds nothing once they end (docs/inventory.md).
"""

from datetime import UTC, datetime
from decimal import Decimal

from orders.models import ClientOrder, OrderLine
from tests.e2e.harness import ProcessState

SKU = "P7-S1"


def one_sku_order(order_id: str, lines: int) -> ClientOrder:
    order_lines = [OrderLine(sku=SKU, quantity=1, unit_price=Decimal("0.01"))
                   for _ in range(lines)]
    return ClientOrder(order_id=order_id, customer_id="CUST-1", currency="USD",
                       lines=order_lines, total_price=Decimal("0.01") * lines,
                       created_at=datetime(2029, 12, 31, tzinfo=UTC))


def test_large_orders_of_one_sku_leave_another_clients_order_of_it_on_time(make_system):
    system = make_system()
    inventory = system.services.stores.inventory
    inventory.load({SKU: 10_000})
    huge = [one_sku_order(f"HUGE-{n}", 1000) for n in range(4)]
    large = [one_sku_order(f"LARGE-{n}", 50) for n in range(4)]
    small = one_sku_order("SMALL-1", 1)
    for order in huge + large[:2]:
        system.submit(order, client_id="acme")
    system.submit(small, client_id="globex")
    for order in large[2:]:
        system.submit(order, client_id="acme")
    system.run(120)
    rejected = {r["orderId"]: r["reason"] for r in system.replies("acme")
                if r["status"] == "Rejected"}
    assert sorted(rejected) == [o.order_id for o in huge]
    assert all("MAX_ORDER_LINES=50" in why for why in rejected.values())
    assert all(system.state(o.order_id, "acme") is None for o in huge)
    for order, client in [*((o, "acme") for o in large), (small, "globex")]:
        record = system.state(order.order_id, client)
        assert record.process_state is ProcessState.PROCESSED, (order.order_id, record)
        assert (record.attempt, record.failure_count) == (1, 0), order.order_id
    assert [r["status"] for r in system.replies("globex")] == [
        "RequestReceived", "OrderCompleted"]
    item = inventory.get(SKU)
    assert item.holds == {} and item.consumed == 4 * 50 + 1 and item.balanced
    assert item.available == 10_000 - 201
