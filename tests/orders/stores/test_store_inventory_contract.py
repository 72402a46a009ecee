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


def test_release_twice_adds_once_and_leaves_no_hold(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    inv.reserve("P1-S1", "O-1#0", 4)
    assert inv.release("P1-S1", "O-1#0") == 4
    assert inv.release("P1-S1", "O-1#0") == 0
    item = inv.get("P1-S1")
    assert item.available == 10 and item.holds == {}
    assert item.balanced


def test_a_released_tombstone_from_before_still_blocks_a_late_reserve_until_released(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    item = inv.get("P1-S1")
    old = item.model_copy(update={"holds": {"O-1#0": Hold(quantity=0, released=True)}})
    assert inv._replace(old)
    late = inv.reserve("P1-S1", "O-1#0", 4)
    assert (late.outcome, late.quantity) == (Reserved.RELEASED, 0)
    assert inv.release_lines([("P1-S1", "O-1#0")]) == [0]
    assert inv.get("P1-S1").holds == {} and inv.get("P1-S1").available == 10


def test_settle_removes_a_processed_orders_holds_and_counts_them_consumed(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10, "P2-S2": 10})
    inv.reserve_lines([("P1-S1", "O-1#0", 2), ("P2-S2", "O-1#1", 3), ("P1-S1", "O-1#2", 1)])
    lines = [("P1-S1", "O-1#0"), ("P2-S2", "O-1#1"), ("P1-S1", "O-1#2")]
    assert inv.settle_lines(lines) == 6
    assert inv.settle_lines(lines) == 0
    first, second = inv.get("P1-S1"), inv.get("P2-S2")
    assert (first.holds, first.available, first.consumed) == ({}, 7, 3)
    assert (second.holds, second.available, second.consumed) == ({}, 7, 3)
    assert first.balanced and second.balanced
    assert inv.release_lines(lines) == [0, 0, 0]  # nothing to give back once settled


def test_undo_gives_back_only_what_the_attempt_took_and_no_other_adopted(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10})
    inv.reserve_lines([("P1-S1", "O-1#0", 2), ("P1-S1", "O-1#1", 3)], by="O-1:1")
    # A later attempt finds line 0 held and adopts it; line 1 it has not reached.
    adopted = inv.reserve_lines([("P1-S1", "O-1#0", 2)], by="O-1:2")
    assert adopted[0].outcome is Reserved.ALREADY
    assert inv.undo([("P1-S1", "O-1#0"), ("P1-S1", "O-1#1")], "O-1:1") == 3
    item = inv.get("P1-S1")
    assert item.holds == {"O-1#0": Hold(quantity=2, by="O-1:2")}
    assert item.available == 8 and item.balanced


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
        inv.restock("P1-S1", 1)
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


def test_an_orders_lines_of_one_sku_are_one_write_and_the_item_stays_small(
        stores, monkeypatch):
    """Many 50-line orders of one SKU: the writes per order, the bytes each writes and the
    item's size stay flat (the holds of ended orders leave the item), and another client's
    one-line order of that SKU is served in between."""
    from orders.stores import cosmos_inventory, sqlite_inventory

    written: list[int] = []

    def counting(serialise):
        def wrapped(item, *args):
            document = serialise(item, *args)
            written.append(len(str(document)))
            return document
        return wrapped

    monkeypatch.setattr(sqlite_inventory, "_document", counting(sqlite_inventory._document))
    monkeypatch.setattr(cosmos_inventory, "to_document", counting(cosmos_inventory.to_document))
    inv = stores.inventory
    inv.load({"P1-S1": 1_000_000})
    writes, sizes = [], []
    for n in range(10, 50):  # keys of one length
        lines = [("P1-S1", f"shop-a~O-{n}#{i:02d}", 1) for i in range(50)]
        before = len(written)
        got = inv.reserve_lines(lines, by=f"shop-a~O-{n}:1")
        assert {g.outcome for g in got} == {Reserved.RESERVED}
        writes.append((len(written) - before, written[-1]))
        inv.settle_lines([(sku, key) for sku, key, _ in lines])
        other = inv.reserve_lines([("P1-S1", f"shop-b~O-{n}#0", 1)], by=f"shop-b~O-{n}:1")
        assert other[0].outcome is Reserved.RESERVED
        inv.settle_lines([("P1-S1", f"shop-b~O-{n}#0")])
        sizes.append(len(inv.get("P1-S1").model_dump_json()))
    # One write per order; what it writes grows only with the counters' digits.
    assert {count for count, _ in writes} == {1}
    assert max(size for _, size in writes) - min(size for _, size in writes) < 10
    assert max(sizes) - min(sizes) < 10
    item = inv.get("P1-S1")
    assert item.holds == {} and item.consumed == 40 * 51 and item.balanced


def test_load_prices_the_items_it_creates_and_the_price_survives_every_write(stores):
    from decimal import Decimal

    inv = stores.inventory
    inv.load({"P1-S2": 10, "P9-S9": 1}, {"P1-S2": Decimal("901.00")})
    inv.reserve_lines([("P1-S2", "O-1#0", 2)], by="O-1:1")
    inv.settle_lines([("P1-S2", "O-1#0")])
    assert inv.get("P1-S2").unit_price == Decimal("901.00")
    assert inv.get("P9-S9").unit_price is None


def test_get_many_reads_each_distinct_sku_as_get_does(stores):
    inv = stores.inventory
    inv.load({"P1-S1": 10, "P2-S2": 3})
    inv.reserve("P2-S2", "O-1#0", 1)
    got = inv.get_many(["P2-S2", "P9-S9", "P1-S1", "P2-S2"])
    assert list(got) == ["P2-S2", "P9-S9", "P1-S1"]
    assert got == {sku: inv.get(sku) for sku in ("P2-S2", "P9-S9", "P1-S1")}
    assert got["P2-S2"].available == 2 and got["P2-S2"].etag
    assert inv.get_many([]) == {}
