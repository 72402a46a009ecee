"""Reserve and release inventory with real SQLite stores (S4, S9, X6, X7).

The crash test SIGKILLs a real process between the two line writes of one reservation.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from activities import compensation_steps, steps
from orders.models import Order, ProcessState, Step
from orders.models.inventory import Hold
from tests.support.records import RESERVE, entry, record_in

TWO_LINES = {"orderId": "ORD-1", "lines": [
    {"sku": "P1-S1", "quantity": 3, "unitPrice": "1.00"},
    {"sku": "P2-S2", "quantity": 5, "unitPrice": "1.00"}]}
RELEASE = {"orderId": "ORD-1", "reservationId": "RES-ORD-1"}


def available(stores, sku):
    return stores.inventory.get(sku).available


def test_reserve_takes_each_line_once_across_reruns(services, stores, clock):
    record_in(stores.states, clock)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    first = steps.reserve_inventory(TWO_LINES, services)
    again = steps.reserve_inventory(TWO_LINES, services)
    assert first == again and "outOfStock" not in first
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (7, 5)
    assert stores.inventory.get("P2-S2").holds == {"ORD-1#1": Hold(quantity=5, by="ORD-1:1")}
    (logged,) = stores.compensation.entries("ORD-1")
    assert (logged.step, logged.instance_id) == (Step.RESERVE_INVENTORY, "ORD-1:1")


def test_out_of_stock_on_line_2_is_reported_and_compensation_releases_line_1(services,
                                                                           stores, clock):
    record_in(stores.states, clock)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 4})
    result = steps.reserve_inventory(TWO_LINES, services)
    assert result["outOfStock"] == {"sku": "P2-S2", "line": 1, "requested": 5, "available": 4}
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (7, 4)
    failed = compensation_steps.fail_order(
        {"orderId": "ORD-1", "instanceId": "ORD-1:1",
         "reason": "attempt ORD-1:1: reserve_inventory failed permanently: out of stock"},
        services)
    assert failed["state"] == "Compensating"  # the reservation entry is to undo
    released = compensation_steps.release_inventory(RELEASE, services)
    assert released["released"] == [{"sku": "P1-S1", "quantity": 3}]
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (10, 4)
    assert all(i.balanced and i.held == 0 for i in stores.inventory.items())


def test_release_twice_adds_once(services, stores, clock):
    record_in(stores.states, clock)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    steps.reserve_inventory(TWO_LINES, services)
    first = compensation_steps.release_inventory(RELEASE, services)
    second = compensation_steps.release_inventory(RELEASE, services)
    assert [line["quantity"] for line in first["released"]] == [3, 5]
    assert second["released"] == []
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (10, 10)


@pytest.mark.parametrize("activity", sorted({"reserve_inventory", "begin_attempt"}))
def test_a_reservation_that_loses_its_order_meanwhile_gives_back_what_it_took(
        services, stores, clock, monkeypatch, activity):
    """The attempt passed its fence, then compensation took the record and released the
    (not yet held) lines before the attempt's write: what it takes is given back."""
    record_in(stores.states, clock)
    stores.orders.create_if_absent(Order.model_validate({
        **TWO_LINES, "customerId": "C-1", "currency": "USD", "totalPrice": "8.00",
        "createdAt": "2029-12-31T00:00:00Z"}))
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    real = type(stores.inventory).reserve_lines

    def compensated_first(self, lines, *, by=None):
        record = stores.states.get("ORD-1")
        stores.states.replace(record.model_copy(update={
            "process_state": ProcessState.COMPENSATING, "locked_by": "ORD-1:c1"}))
        compensation_steps.release_inventory(RELEASE, services)
        return real(self, lines, by=by)

    monkeypatch.setattr(type(stores.inventory), "reserve_lines", compensated_first)
    if activity == "begin_attempt":
        assert steps.begin_attempt(RESERVING[activity], services)["fenced"] is True
    else:
        with pytest.raises(LookupError, match="given back"):
            steps.reserve_inventory(RESERVING[activity], services)
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (10, 10)
    assert all(i.balanced and i.holds == {} for i in stores.inventory.items())


def test_a_processed_order_settles_its_holds_out_of_the_stock_items(services, stores, clock):
    record_in(stores.states, clock)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    steps.reserve_inventory(TWO_LINES, services)
    steps.finish_attempt({"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Processed"},
                         services)
    for sku, left, taken in (("P1-S1", 7, 3), ("P2-S2", 5, 5)):
        item = stores.inventory.get(sku)
        assert (item.available, item.consumed, item.holds, item.balanced) == (
            left, taken, {}, True)


def test_an_old_version_in_flight_order_compensates_without_inventing_stock(services,
                                                                          stores, clock):
    # Reserved under the versions before the inventory was real: its log entry says
    # RES-ORD-1 but the stock holds nothing for it (X6).
    record_in(stores.states, clock, state=ProcessState.COMPENSATING, locked_by="ORD-1:c1")
    stores.inventory.load({"SKU-A": 10})
    stores.compensation.record(entry(RESERVE, clock.now()))
    released = compensation_steps.release_inventory(RELEASE, services)
    assert released == {"reservationId": "RES-ORD-1", "released": []}
    item = stores.inventory.get("SKU-A")
    assert (item.available, item.held, item.balanced) == (10, 0, True)


CRASH_AFTER_FIRST_LINE = textwrap.dedent("""
    import os, signal, sys
    from clocks import ManualClock
    from orders.runtime import Services
    from orders.settings import Settings
    from orders.stores import create_stores
    from orders.stores.inventory import ConditionalInventory
    from orders.stores.sqlite_inventory import SqliteInventoryStore
    from activities import steps

    data, given, mode, activity = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    if mode == "per_sku":  # one conditional write per SKU, as on Cosmos DB
        SqliteInventoryStore.reserve_lines = ConditionalInventory.reserve_lines
        real = SqliteInventoryStore._replace
        def replace_then_die(self, item):
            real(self, item)
            os.kill(os.getpid(), signal.SIGKILL)  # between the writes of two SKUs
        SqliteInventoryStore._replace = replace_then_die
    else:  # all lines in one transaction: die inside it, after the first SKU's write
        real = SqliteInventoryStore._write_item
        def write_then_die(conn, item):
            real(conn, item)
            os.kill(os.getpid(), signal.SIGKILL)
        SqliteInventoryStore._write_item = staticmethod(write_then_die)
    stores = create_stores("sqlite", orders_path=f"{data}/orders.sqlite",
                           state_path=f"{data}/state.sqlite")
    services = Services(settings=Settings(DEVHOST_DATA_DIR=data), clock=ManualClock(),
                        stores=stores, sender=None, breakers=None, http=None, settler=None)
    getattr(steps, activity)(__import__("json").loads(given), services)
""")

TAKEN_BY_THE_CRASH = {"per_sku": (7, 10), "batched": (10, 10)}
"""Stock of P1-S1 and P2-S2 after the crash: the first SKU was written alone, or nothing
of the transaction was."""


RESERVING = {"reserve_inventory": TWO_LINES, "begin_attempt": {
    "orderId": "ORD-1", "instanceId": "ORD-1:1", "completeBy": "2030-01-01T00:00:30.000000Z",
    "loadOrder": True, "reserve": True}}
"""The input of each activity that reserves: its own, and the first of versions 5 and 6."""


def crash_after_first_line(stores, clock, tmp_path, mode, activity="reserve_inventory"):
    record_in(stores.states, clock)
    stores.orders.create_if_absent(Order.model_validate({
        **TWO_LINES, "customerId": "C-1", "currency": "USD", "totalPrice": "8.00",
        "createdAt": "2029-12-31T00:00:00Z"}))
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    crashed = subprocess.run([sys.executable, "-c", CRASH_AFTER_FIRST_LINE, str(tmp_path),
                              json.dumps(RESERVING[activity]), mode, activity],
                             capture_output=True, text=True, timeout=60,
                             env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == TAKEN_BY_THE_CRASH[mode]
    assert [e.step for e in stores.compensation.entries("ORD-1")] == [Step.RESERVE_INVENTORY]


@pytest.mark.parametrize("activity", sorted(RESERVING))
@pytest.mark.parametrize("mode", sorted(TAKEN_BY_THE_CRASH))
def test_a_sigkill_between_the_writes_of_one_reservation_recovers_by_a_rerun(
        services, stores, clock, tmp_path, mode, activity):
    crash_after_first_line(stores, clock, tmp_path, mode, activity)
    # The activity runs again (redelivery, or the supervisor's next attempt).
    getattr(steps, activity)(RESERVING[activity], services)
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (7, 5)
    assert all(i.balanced for i in stores.inventory.items())


@pytest.mark.parametrize(("mode", "given_back"), [
    ("per_sku", [{"sku": "P1-S1", "quantity": 3}]), ("batched", [])])
def test_a_sigkill_between_the_writes_of_one_reservation_is_released_exactly(
        services, stores, clock, tmp_path, mode, given_back):
    crash_after_first_line(stores, clock, tmp_path, mode)
    released = compensation_steps.release_inventory(RELEASE, services)
    assert released["released"] == given_back
    assert (available(stores, "P1-S1"), available(stores, "P2-S2")) == (10, 10)
    assert all(i.balanced and i.held == 0 for i in stores.inventory.items())


def test_a_release_entry_is_confidential_only_when_it_names_what_came_back(services, stores,
                                                                          clock):
    from orders.models import CompensationEntry

    def logged(released):
        details = {"step": "release_inventory", "reservationId": "RES-ORD-1",
                   "released": released}
        return CompensationEntry.new("ORD-1", details, instance_id="ORD-1:c1",
                                     workflow_version=1, now=clock.now()).classification.value

    assert logged([{"sku": "P1-S1", "quantity": 3}]) == "Confidential"
    assert logged([]) == "Internal"
