"""Inventory store contract, run against every backend (see conftest.py).

The concurrency tests run reservations from several threads, each with its own stores
(its own SQLite connection or Cosmos DB client), so the conditional replaces really race.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from orders.models.inventory import Hold
from orders.stores import TransientStoreError
from orders.stores import inventory as inventory_module
from orders.stores.inventory import Reserved


def test_load_creates_missing_items_once(stores):
    inv = stores.inventory
    assert inv.load({"P1-S1": 10, "P2-S2": 3}) == 2
    assert inv.load({"P1-S1": 99, "P3-S3": 1}) == 1
    item = inv.get("P1-S1")
    assert (item.available, item.loaded, item.restocked, item.holds) == (10, 10, 0, {})
    assert item.etag
    assert sorted(i.sku for i in inv.items()) == ["P1-S1", "P2-S2", "P3-S3"]


def test_reserve_decrements_and_a_rerun_reserves_nothing_twice(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    first = inv.reserve("P1-S1", "shop~O-1#0", 4)
    again = inv.reserve("P1-S1", "shop~O-1#0", 4)
    assert (first.outcome, first.available) == (Reserved.RESERVED, 6)
    assert (again.outcome, again.quantity, again.available) == (Reserved.ALREADY, 4, 6)
    item = inv.get("P1-S1")
    assert item.available == 6 and item.holds == {"shop~O-1#0": Hold(quantity=4)}
    assert item.balanced


def test_reserve_never_goes_below_zero(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 3})
    refused = inv.reserve("P1-S1", "O-1#0", 4)
    assert (refused.outcome, refused.available) == (Reserved.OUT_OF_STOCK, 3)
    assert inv.reserve("P1-S1", "O-2#0", 3).available == 0
    assert inv.get("P1-S1").available == 0


def test_release_twice_adds_once(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    inv.reserve("P1-S1", "O-1#0", 4)
    assert inv.release("P1-S1", "O-1#0") == 4
    assert inv.release("P1-S1", "O-1#0") == 0
    item = inv.get("P1-S1")
    assert item.available == 10 and item.holds["O-1#0"] == Hold(quantity=4, released=True)
    assert item.balanced


def test_release_of_a_line_never_reserved_adds_nothing_and_blocks_a_late_reserve(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    assert inv.release("P1-S1", "O-1#0") == 0
    late = inv.reserve("P1-S1", "O-1#0", 4)
    assert (late.outcome, late.quantity) == (Reserved.RELEASED, 0)
    assert inv.get("P1-S1").available == 10


def test_unknown_sku_is_untracked_and_changes_nothing(stores):
    inv = stores.inventory
    assert inv.reserve("P9-S9", "O-1#0", 1).outcome is Reserved.UNTRACKED
    assert inv.release("P9-S9", "O-1#0") == 0
    assert inv.get("P9-S9") is None


def test_restock_adds_units_and_creates_a_missing_item(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 1})
    inv.reserve("P1-S1", "O-1#0", 1)
    item = inv.restock("P1-S1", 5)
    assert (item.available, item.loaded, item.restocked) == (5, 1, 5) and item.balanced
    new = inv.restock("P7-S7", 2)
    assert (new.available, new.loaded, new.restocked) == (2, 0, 2)
    with pytest.raises(ValueError, match="quantity"):
        inv.restock("P1-S1", 0)


def test_concurrent_reservations_of_one_sku_never_oversell(make_stores):
    setup = make_stores()
    setup.inventory.load({"P1-S1": 25})
    writers = [make_stores() for _ in range(4)]

    def order(n):
        return writers[n % 4].inventory.reserve("P1-S1", f"O-{n}#0", 2).outcome

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(order, range(20)))
    item = setup.inventory.get("P1-S1")
    assert outcomes.count(Reserved.RESERVED) == 12
    assert outcomes.count(Reserved.OUT_OF_STOCK) == 8
    assert item.available == 1 and item.held == 24 and item.balanced
    assert len([h for h in item.holds.values() if h.quantity == 2]) == 12


def test_concurrent_reruns_of_one_line_reserve_it_once(make_stores):
    setup = make_stores()
    setup.inventory.load({"P1-S1": 100})
    writers = [make_stores() for _ in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(
            lambda n: writers[n % 4].inventory.reserve("P1-S1", "O-1#0", 7).outcome,
            range(8)))
    assert outcomes.count(Reserved.RESERVED) == 1
    assert outcomes.count(Reserved.ALREADY) == 7
    assert setup.inventory.get("P1-S1").available == 93


def test_a_write_that_always_loses_its_etag_gives_up_transiently(stores, monkeypatch):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    monkeypatch.setattr(type(inv), "_replace", lambda self, item: False)
    with pytest.raises(TransientStoreError, match="P1-S1"):
        inv.reserve("P1-S1", "O-1#0", 1)
    assert inventory_module.MAX_CONFLICT_RETRIES >= 2
    assert inv.get("P1-S1").available == 10


def test_reserve_lines_reserves_in_order_and_stops_at_the_first_short_line(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 5, "P2-S2": 1, "P3-S3": 5})
    got = inv.reserve_lines([("P1-S1", "O-1#0", 2), ("P1-S1", "O-1#1", 2),
                             ("P2-S2", "O-1#2", 3), ("P3-S3", "O-1#3", 1)])
    assert [(g.outcome, g.quantity, g.available) for g in got] == [
        (Reserved.RESERVED, 2, 3), (Reserved.RESERVED, 2, 1), (Reserved.OUT_OF_STOCK, 0, 1)]
    # The line after the short one was not tried; a rerun takes nothing twice.
    assert inv.get("P3-S3").available == 5
    again = inv.reserve_lines([("P1-S1", "O-1#0", 2), ("P1-S1", "O-1#1", 2)])
    assert [g.outcome for g in again] == [Reserved.ALREADY, Reserved.ALREADY]
    assert inv.get("P1-S1").available == 1
