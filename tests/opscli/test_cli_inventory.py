"""The operator CLI's inventory commands and an order's reservation, on a local data folder."""

import json

import pytest

from activities import steps
from clocks import ManualClock
from orders.runtime import Services
from orders.settings import Settings
from tests.opscli.test_cli import cli, data_dir  # noqa: F401 - data_dir: the fixture
from tests.support.records import record_in
from tests.support.stores import sqlite_stores

LINES = {"orderId": "ORD-1", "lines": [{"sku": "P1-S1", "quantity": 3, "unitPrice": "1.00"},
                                       {"sku": "P2-S2", "quantity": 9, "unitPrice": "1.00"}]}


@pytest.fixture
def stocked(data_dir):  # noqa: F811 - the fixture imported above
    stores = sqlite_stores(data_dir)
    clock = ManualClock()
    record_in(stores.states, clock)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 4})
    services = Services(settings=Settings(DEVHOST_DATA_DIR=str(data_dir)), clock=clock,
                        stores=stores, sender=None, breakers=None, http=None, settler=None)
    steps.reserve_inventory(LINES, services)  # line 2 runs out of stock
    stores.close()
    return data_dir


def test_stock_shows_a_skus_figures_and_holds(stocked):
    result = cli(stocked, "stock", "P1-S1", "--json", "--details")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "sku": "P1-S1", "available": 7, "loaded": 10, "restocked": 0, "held": 3, "consumed": 0,
        "balanced": True, "holdCount": 1,
        "holds": [{"orderId": "ORD-1", "line": 1, "quantity": 3, "released": False}]}
    # An order's line is Confidential: its units only with --details (X10).
    plain = json.loads(cli(stocked, "stock", "P1-S1", "--json").stdout)
    assert plain["holds"] == [{"orderId": "ORD-1", "line": 1, "quantity": "<Confidential>",
                               "released": False}]
    table = cli(stocked, "stock", "P1-S1")
    assert table.exit_code == 0 and "Stock of P1-S1" in table.stdout
    assert cli(stocked, "stock", "P9-S9").exit_code == 1


def test_restock_adds_units_once_per_call_and_refuses_a_bad_quantity(stocked):
    result = cli(stocked, "restock", "P2-S2", "6", "--by", "ann", "--reason", "delivery",
                 "--json")
    assert result.exit_code == 0, result.output
    after = json.loads(result.stdout)
    assert (after["available"], after["restocked"], after["balanced"]) == (10, 6, True)
    bad = cli(stocked, "restock", "P2-S2", "0")
    assert bad.exit_code == 2 and "quantity" in bad.output
    assert json.loads(cli(stocked, "stock", "P2-S2", "--json").stdout)["available"] == 10


def test_show_lists_the_reservation_line_by_line(stocked):
    result = cli(stocked, "show", "ORD-1", "--no-history", "--json", "--details")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reservation"] == [
        {"line": 1, "sku": "P1-S1", "requested": 3, "held": 3, "fullyHeld": True,
         "released": False, "settled": False, "available": 7},
        {"line": 2, "sku": "P2-S2", "requested": 9, "held": 0, "fullyHeld": False,
         "released": False, "settled": False, "available": 4}]
    hidden = "<Confidential>"
    plain = json.loads(cli(stocked, "show", "ORD-1", "--no-history", "--json").stdout)
    assert plain["reservation"] == [
        {"line": n, "sku": hidden, "requested": hidden, "held": hidden, "fullyHeld": full,
         "released": False, "settled": False, "available": hidden}
        for n, full in ((1, True), (2, False))]
    assert "Reservation" in cli(stocked, "show", "ORD-1", "--no-history").stdout
