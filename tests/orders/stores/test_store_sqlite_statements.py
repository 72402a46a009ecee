"""The statements each embedded store operation runs (the trips of the local host).

Each test counts with SQLite's trace callback (one call per statement, BEGIN and COMMIT
included) what one operation runs alone, and checks what it answered, so a cut in the
count never changes what the port promises (the contract suite checks the rest).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from store_builders import make_order

from clocks import ManualClock
from orders.models import CompensationEntry, ProcessState, StateRecord
from orders.stores import sqlite_inventory
from orders.stores.errors import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    TransientStoreError,
)
from orders.stores.inventory import MAX_CONFLICT_RETRIES, Reserved
from orders.stores.sqlite_compensation import SqliteCompensationLog
from orders.stores.sqlite_inventory import SqliteInventoryStore
from orders.stores.sqlite_orders import SqliteOrderStore
from orders.stores.sqlite_state import SqliteStateStore
from tests.support.records import CHARGE, SHIP
from tests.support.statements import traced


def statements(store: Any) -> AbstractContextManager[list[str]]:
    """Collect the statements ``store``'s connection runs inside the block."""
    return traced(store._db.conn)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def states(tmp_path, clock) -> Iterator[SqliteStateStore]:
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=clock)
    yield store
    store.close()


def claim_of(record: StateRecord, instance: str) -> StateRecord:
    return record.model_copy(update={"process_state": ProcessState.PROCESSING,
                                     "locked_by": instance, "attempt": record.attempt + 1})


def test_a_state_record_is_created_by_one_insert(states, clock):
    with statements(states) as seen:
        created = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now()))
    assert created.created
    assert [s.split(" ")[0] for s in seen] == ["INSERT"]
    assert states.get("O-1") == created.record


@pytest.mark.parametrize("write", ["replace", "claim"])
def test_a_conditional_write_that_succeeds_is_one_update(states, clock, write):
    record = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now())).record
    changed = claim_of(record, "O-1:1")
    with statements(states) as seen:
        stored = (states.replace(changed) if write == "replace"
                  else states.claim_within(changed, 5))
    assert [s.split(" ")[0] for s in seen] == ["UPDATE"]
    assert stored is not None and stored.etag != record.etag
    assert states.get("O-1") == stored


@pytest.mark.parametrize(("case", "expected"), [
    ("stale", PreconditionFailedError), ("missing", NotFoundError), ("full", None)])
def test_a_conditional_write_that_fails_reads_once_to_say_why(states, clock, case, expected):
    # A stale ETag is 412 and a missing record 404, as on Cosmos DB; a claim with no free
    # slot writes nothing and returns None. Each: the UPDATE, then one read of the ETag.
    busy = states.create_if_absent(StateRecord.new("O-0", "replies-acme", clock.now())).record
    states.replace(claim_of(busy, "O-0:1"))
    record = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now())).record
    if case == "stale":
        states.replace(record.model_copy(update={"failure_count": 1}))
    changed = claim_of(record, "O-1:1")
    if case == "missing":
        changed = changed.model_copy(update={"order_key": "O-9"})
    with statements(states) as seen:
        if expected is None:
            assert states.claim_within(changed, 1) is None
        else:
            with pytest.raises(expected):
                states.claim_within(changed, 1)
    assert [s.split(" ")[0] for s in seen] == ["UPDATE", "SELECT"]
    assert states.get("O-1").process_state is ProcessState.PENDING
    assert states.count_by_state([ProcessState.PROCESSING]) == {ProcessState.PROCESSING: 1}


@pytest.fixture
def log(tmp_path) -> Iterator[SqliteCompensationLog]:
    store = SqliteCompensationLog(tmp_path / "state.sqlite")
    yield store
    store.close()


def entry(clock: ManualClock, details: dict[str, Any], order_key: str = "O-1"
          ) -> CompensationEntry:
    return CompensationEntry.new(order_key, details, instance_id=f"{order_key}:1",
                                 workflow_version=3, now=clock.now())


def kinds(seen: list[str]) -> list[str]:
    return [s.split(" ")[0] for s in seen]


def test_a_log_entry_is_one_insert_that_numbers_it(log, clock):
    charge, ship = entry(clock, {**CHARGE, "step": "charge"}), entry(clock, SHIP)
    with statements(log) as seen:
        first = log.record(charge)
        second = log.record(ship)
    assert kinds(seen) == ["INSERT", "INSERT"]
    assert [(first.created, first.record.seq), (second.created, second.record.seq)] == [
        (True, 1), (True, 2)]
    assert log.entries("O-1") == [first.record, second.record]  # seq in each document too


def test_a_logged_step_is_one_insert_that_does_nothing_and_one_read(log, clock):
    charge = entry(clock, {**CHARGE, "step": "charge"})
    log.record(charge)
    other = entry(clock, {**CHARGE, "step": "charge", "amount": "1.00"})
    with statements(log) as seen:
        again = log.record(charge)
        with pytest.raises(ConflictError):
            log.record(other)
    assert kinds(seen) == ["INSERT", "SELECT", "INSERT", "SELECT"]
    assert (again.created, again.record.seq) == (False, 1)
    assert log.entries("O-1") == [again.record]


def test_entries_recorded_together_are_one_insert_each_in_one_transaction(log, clock):
    log.record(entry(clock, {**CHARGE, "step": "charge"}, "O-2"))  # another order's seq
    with statements(log) as seen:
        done = log.record_all([entry(clock, {**CHARGE, "step": "charge"}),
                               entry(clock, SHIP)])
    assert kinds(seen) == ["BEGIN", "INSERT", "INSERT", "COMMIT"]
    assert [(c.created, c.record.seq) for c in done] == [(True, 1), (True, 2)]


@pytest.fixture
def inventory(tmp_path) -> Iterator[SqliteInventoryStore]:
    store = SqliteInventoryStore(tmp_path / "state.sqlite")
    store.load({"P1-S1": 10, "P2-S2": 10})
    yield store
    store.close()


LINES = [("P1-S1", "O-1#0", 2), ("P2-S2", "O-1#1", 3), ("P1-S1", "O-1#2", 1),
         ("P9-S9", "O-1#3", 1)]
"""Three lines on two stocked SKUs, one on a SKU the inventory has no item for."""


def test_reserving_an_orders_lines_reads_its_skus_at_once_and_writes_each_once(inventory):
    with statements(inventory) as seen:
        got = inventory.reserve_lines(LINES, by="O-1:1")
    assert kinds(seen) == ["BEGIN", "SELECT", "UPDATE", "UPDATE", "COMMIT"]
    assert [g.outcome for g in got] == [Reserved.RESERVED] * 3 + [Reserved.UNTRACKED]
    assert (inventory.get("P1-S1").available, inventory.get("P2-S2").available) == (7, 7)


def test_the_items_of_an_orders_skus_are_read_by_one_select(inventory):
    with statements(inventory) as seen:
        got = inventory.get_many(sku for sku, _, _ in LINES)
    assert kinds(seen) == ["SELECT"]
    assert {sku: item and item.available for sku, item in got.items()} == {
        "P1-S1": 10, "P2-S2": 10, "P9-S9": None}


@pytest.mark.parametrize("ending", ["settle", "release", "undo"])
def test_ending_an_orders_holds_is_one_read_and_one_conditional_write(inventory, ending):
    inventory.reserve_lines(LINES, by="O-1:1")
    keys = [(sku, key) for sku, key, _ in LINES]
    with statements(inventory) as seen:
        units = (inventory.settle_lines(keys) if ending == "settle"
                 else sum(inventory.release_lines(keys)) if ending == "release"
                 else inventory.undo(keys, "O-1:1"))
    assert kinds(seen) == ["SELECT", "UPDATE"]
    assert units == 6
    items = [inventory.get("P1-S1"), inventory.get("P2-S2")]
    assert [i.holds for i in items] == [{}, {}]
    assert [i.available for i in items] == ([7, 7] if ending == "settle" else [10, 10])


def test_a_sku_changed_between_the_read_and_the_write_is_read_and_decided_again(
        inventory, monkeypatch, tmp_path):
    inventory.reserve_lines(LINES, by="O-1:1")
    other = SqliteInventoryStore(tmp_path / "state.sqlite")
    read = sqlite_inventory._items
    rounds = []

    def restocked_after_the_first_read(conn, skus):
        found = read(conn, skus)
        if conn is not inventory._db.conn:
            return found
        rounds.append(sorted(found))
        if len(rounds) == 1:
            other.restock("P2-S2", 5)  # another process's write: a new ETag
        return found

    monkeypatch.setattr(sqlite_inventory, "_items", restocked_after_the_first_read)
    with statements(inventory) as seen:
        given = inventory.release_lines([(sku, key) for sku, key, _ in LINES])
    other.close()
    assert kinds(seen) == ["SELECT", "UPDATE", "SELECT", "UPDATE"]
    assert rounds == [["P1-S1", "P2-S2", "P9-S9"], ["P2-S2"]]
    assert given == [2, 3, 1, 0]
    assert (inventory.get("P1-S1").available, inventory.get("P2-S2").available) == (10, 15)


def test_a_sku_that_changes_under_every_write_gives_up_transiently(inventory, monkeypatch):
    inventory.reserve_lines(LINES, by="O-1:1")
    monkeypatch.setattr(sqlite_inventory, "_write_items", lambda conn, items: set())
    with statements(inventory) as seen, pytest.raises(TransientStoreError, match="P1-S1"):
        inventory.settle_lines([("P1-S1", "O-1#0")])
    assert kinds(seen) == ["SELECT"] * MAX_CONFLICT_RETRIES
    assert inventory.get("P1-S1").holds.keys() == {"O-1#0", "O-1#2"}


def test_an_order_is_stored_by_one_insert_and_a_resend_reads_it_once(tmp_path, clock):
    orders = SqliteOrderStore(tmp_path / "orders.sqlite", clock=clock)
    order = make_order("O-1")
    with statements(orders) as seen:
        first = orders.create_if_absent(order)
        again = orders.create_if_absent(order)
        with pytest.raises(ConflictError):
            orders.create_if_absent(make_order("O-1", customer_id="CUST-8"))
    orders.close()
    assert kinds(seen) == ["INSERT", "INSERT", "SELECT", "INSERT", "SELECT"]
    assert (first.created, again.created, again.record) == (True, False, order)
