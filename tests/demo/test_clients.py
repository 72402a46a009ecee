"""The demo's clients share the orders, a tenth of the OrderIDs used by both (X10)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from demo.audit import AuditReport
from demo.clients import CLIENTS, ClientBatch, split
from demo.summary import Records, summarize
from orders.models import ClientOrder, OrderLine, ProcessState, StateRecord

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def order(n: int) -> ClientOrder:
    return ClientOrder(order_id=f"TPCH-{n}", customer_id="C", currency="USD",
                       lines=[OrderLine(sku="S", quantity=1, unit_price=Decimal("10"))],
                       total_price=Decimal("10"), created_at=NOW)


def test_two_clients_share_sixty_orders_six_order_ids_used_by_both():
    batches = split([order(n) for n in range(60)])
    assert [b.client_id for b in batches] == list(CLIENTS) == ["shop-a", "shop-b"]
    a, b = ([o.order_id for o in batch.orders] for batch in batches)
    assert (len(a), len(b)) == (30, 30)
    assert set(a) & set(b) == {f"TPCH-{n}" for n in range(24, 30)}
    assert batches[1].keys[0] == "shop-b~TPCH-24" and batches[0].keys[24] == "shop-a~TPCH-24"


@pytest.mark.parametrize("n", [0, 1, 9, 61])
def test_every_order_is_submitted_once_in_all(n):
    batches = split([order(i) for i in range(n)])
    assert sum(len(b.orders) for b in batches) == n
    assert len({k for b in batches for k in b.keys}) == n


def test_a_client_summary_counts_only_its_own_orders():
    def record(key, state):
        client, order_id = key.split("~")
        return StateRecord(order_key=key, client_id=client, client_order_id=order_id,
                           process_state=state, locked_by=f"{key}:1", attempt=1,
                           reply_to=f"replies-{client}", created_at=NOW, updated_at=NOW)

    a = ClientBatch("shop-a", (order(1), order(2)))
    b = ClientBatch("shop-b", (order(2),))
    records = Records({"shop-a~TPCH-1": record("shop-a~TPCH-1", ProcessState.PROCESSED),
                       "shop-a~TPCH-2": record("shop-a~TPCH-2", ProcessState.ERROR),
                       "shop-b~TPCH-2": None},
                      {("payment", "charge", "shop-a~TPCH-1"): 2}, AuditReport(()))
    mine = summarize(records, a.keys, set(), 1.0, whole_run=False)
    theirs = summarize(records, b.keys, {"shop-b~TPCH-2"}, 1.0, whole_run=False)
    assert mine.counts() == ("orders=2 processed=1 error=1 recovered=0 lost=0 "
                             "duplicate_effects=1 unbalanced=0")
    assert theirs.counts() == ("orders=1 processed=0 error=0 recovered=0 lost=0 "
                               "duplicate_effects=0 unbalanced=0")
    assert mine.client_line("shop-a", None, {"TPCH-1", "TPCH-2"}).endswith(
        "heard=0 foreign=0")
