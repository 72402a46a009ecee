"""Order database contract, run against every backend (see conftest.py)."""

from decimal import Decimal

import pytest
from store_builders import make_order

from orders.stores import ConflictError


def test_create_then_get_returns_equal_order(stores):
    order = make_order("ORD-1")
    outcome = stores.orders.create_if_absent(order)
    assert outcome.created is True
    stored = stores.orders.get("ORD-1")
    assert stored == order
    assert stored.lines[0].unit_price == Decimal("10.00")
    assert stored.total_price == Decimal("23.90")


def test_create_twice_with_same_data_keeps_one_order(stores):
    order = make_order("ORD-2")
    stores.orders.create_if_absent(order)
    again = stores.orders.create_if_absent(make_order("ORD-2", total_price=Decimal("23.9")))
    assert again.created is False
    assert again.record == order
    assert stores.orders.get("ORD-2") == order


def test_create_with_different_data_conflicts_and_keeps_original(stores):
    original = make_order("ORD-3")
    stores.orders.create_if_absent(original)
    with pytest.raises(ConflictError, match="ORD-3"):
        stores.orders.create_if_absent(make_order("ORD-3", customer_id="SOMEONE-ELSE"))
    assert stores.orders.get("ORD-3") == original
    assert stores.orders.get("ORD-3").customer_id == "CUST-7"


def test_get_missing_order_returns_none(stores):
    assert stores.orders.get("NO-SUCH-ORDER") is None


def test_orders_survive_reopening(make_stores):
    first = make_stores()
    first.orders.create_if_absent(make_order("ORD-4"))
    first.close()
    assert make_stores().orders.get("ORD-4") == make_order("ORD-4")
