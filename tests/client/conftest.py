"""Fixtures of the client tests: TPC-H data once per session, a local engine per test."""

from __future__ import annotations

import fcntl
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from client import tpch
from clocks import ManualClock
from orders.models import ClientOrder
from sqlitebus import ServiceBusEngine, load_queue_catalog

TPCH_SCALE_FACTOR = 0.01


@pytest.fixture(scope="session")
def tpch_dir(tmp_path_factory, worker_id):
    """orders.csv and lineitem.csv at scale factor 0.01 (15,000 orders), generated once.

    Once for the whole run: xdist workers share their base temp folder's parent, the first
    generates under the lock and the others find the files (``generate`` then skips).
    """
    root = tmp_path_factory.getbasetemp()
    root = root if worker_id == "master" else root.parent
    with open(root / "tpch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return tpch.generate(TPCH_SCALE_FACTOR, root / "tpch")


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def engine(tmp_path, clock):
    # The repository's infra/queues.json: 'orders' and the replies-{clientId} pattern.
    eng = ServiceBusEngine.in_data_dir(tmp_path / "data", catalog=load_queue_catalog(),
                                       clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def make_order():
    return _make_order


def _make_order(order_id: str, *, lines: int = 1, quantity: int = 2) -> ClientOrder:
    """A valid client's order: each line 2 x 10.00 with 10 % discount and 5 % tax (18.90)."""
    return ClientOrder(
        order_id=order_id,
        customer_id="CUST-1",
        currency="USD",
        lines=[{"sku": f"SKU-{i}", "quantity": quantity, "unit_price": Decimal("10.00"),
                "discount": Decimal("0.10"), "tax": Decimal("0.05")} for i in range(lines)],
        total_price=Decimal("9.45") * quantity * lines,
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
