"""The demo's stage: its settings, the TPC-H orders and the stock they draw on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from client import tpch
from demo.clients import CLIENTS, ClientBatch, split
from opscli.cli import out

console = out()
"""As wide as the terminal, or as the operator CLI's tables when piped: a log keeps each
line, the dashboard's URL among them, whole."""
REPO = Path(__file__).resolve().parents[1]
DEMO_SETTINGS = {
    "ORDER_DEADLINE_S": "10", "START_GRACE_S": "20", "RETRY_HOLD_BASE_S": "1",
    "MAX_FAILURES": "5", "AGENT_MAX_ATTEMPTS": "4", "AGENT_CALL_TIMEOUT_S": "2",
    "MAX_PROCESSING": "60",
    "CIRCUIT_FAILURE_THRESHOLD": "5", "CIRCUIT_COOL_DOWN_S": "2",
    "STARTER_SCHEDULE": "*/1 * * * * *", "SUPERVISOR_SCHEDULE": "*/1 * * * * *",
    "ORDER_CLIENTS": ",".join(CLIENTS),
}
CHAOS_SETTINGS = {
    "ORDER_DEADLINE_S": "5", "MAX_FAILURES": "4", "RETRY_HOLD_BASE_S": "0.5",
    "AGENT_CALL_TIMEOUT_S": "1", "COMPENSATION_DEADLINE_S": "5",
    "MAX_COMPENSATION_FAILURES": "2",
}
"""Overrides of :data:`DEMO_SETTINGS` in a chaos run: a black-holed order gives up after 4
attempts of 5 s (about 25 s), and a compensation whose undo is never answered after 2."""
def copy_durably(source: Path, target: Path) -> None:
    """Copy a file and fsync the copy, so the timed run does not pay the copy's writeback.

    A task hub of 100,000 instances is 1.6 GB: left in the page cache, its writeback
    competes with the host's own fsyncs (``synchronous=FULL``) during the run.
    """
    shutil.copyfile(source, target)
    with target.open("rb+") as copy:
        os.fsync(copy.fileno())


def tpch_dir(orders: int, data_root: Path) -> Path:
    """Generate (or reuse) the TPC-H data for ``orders`` orders under ``data_root/tpch``."""
    scale = max(0.01, round(orders / 1_500_000 * 1.05, 4))
    console.print(f"demo: generating TPC-H data (scale factor {scale}) ...")
    return tpch.generate(scale, data_root / "tpch" / f"sf-{scale}")


def tpch_batches(orders: int, data_root: Path) -> list[ClientBatch]:
    """Share ``orders`` TPC-H orders among the clients of :data:`~demo.clients.CLIENTS`."""
    return split(list(tpch.load_orders(tpch_dir(orders, data_root), orders)))


def load_stock(data_dir: Path, tpch_folder: Path, batches: list[ClientBatch], *,
               ample: bool = False) -> int:
    """Load the inventory of ``data_dir`` with the stock of the batches' SKUs; return SKUs.

    The stock is PARTSUPP's, scaled (:func:`client.tpch.load_stock`), each SKU priced by
    PART (:func:`client.tpch.load_prices`, the catalogue of :mod:`orders.pricing`); the local host's
    inventory lives in the state store's file, as :mod:`orders.runtime` opens it. With
    ``ample`` (a run without faults) each SKU also gets what all the orders ask of it, so
    no order runs out of stock: running out is one of the demo's faults.
    """
    from orders.stores import local_stores

    wanted: dict[str, int] = {}
    for line in (line for b in batches for o in b.orders for line in o.lines):
        wanted[line.sku] = wanted.get(line.sku, 0) + line.quantity
    stock = tpch.load_stock(tpch_folder, wanted)
    if ample:
        stock = {sku: stock.get(sku, 0) + units for sku, units in wanted.items()}
    prices = tpch.load_prices(tpch_folder, stock)
    with local_stores(data_dir) as stores:
        loaded = stores.inventory.load(stock, prices)
    console.print(f"demo: stock of {loaded} SKUs loaded (TPC-H ps_availqty x "
                  f"{tpch.STOCK_SCALE:g}), priced at p_retailprice")
    return loaded
