"""Prices from the catalogue at submission (S1): the stock item's unitPrice is the authority.

Each form of a mispriced order runs through the submission function on SQLite stores and
is refused with "Rejected" naming the line and field; nothing is stored.
"""

import logging
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from clocks import ManualClock
from orders.models import ClientOrder, OrderLine
from orders.models.messages import SubmitOrder
from scheduler import submission
from tests.scheduler.test_admission import Sent
from tests.support.stores import sqlite_stores

CATALOGUE = {"P1-S2": Decimal("901.00"), "P2-S3": Decimal("902.00")}


@pytest.fixture
def env(tmp_path):
    stores = sqlite_stores(tmp_path)
    stores.inventory.load({"P1-S2": 1000, "P2-S3": 1000, "P3-S4": 1000}, CATALOGUE)
    yield stores, Sent(), ManualClock().now()
    stores.close()


def body(*lines: tuple[str, str, str], currency: str = "USD") -> bytes:
    order_lines = [OrderLine(sku=sku, quantity=2, unit_price=Decimal(price),
                             discount=Decimal(discount)) for sku, price, discount in lines]
    order = ClientOrder(order_id="ORD-1", customer_id="CUST-1", currency=currency,
                        lines=order_lines,
                        total_price=sum((li.charge for li in order_lines), Decimal(0)),
                        created_at=datetime(2029, 12, 31, tzinfo=UTC))
    return SubmitOrder(client_id="acme", reply_to="replies-acme",
                       order=order).model_dump_json(by_alias=True).encode()


GOOD = ("P1-S2", "901.00", "0.04")


@pytest.mark.parametrize(("bad", "names", "logged"), [
    (("P2-S3", "0.01", "0"), "order.lines[1].unitPrice: 0.01 (line 2, SKU P2-S3)",
     "order.lines[1].unitPrice (line 2): differs from the catalogue's price"),
    (("P2-S3", "0.00", "1"), "order.lines[1].unitPrice: 0.00 (line 2, SKU P2-S3)",
     "order.lines[1].unitPrice (line 2)"),
    (("P2-S3", "903.00", "0"), "differs from the catalogue's price 902.00",
     "order.lines[1].unitPrice (line 2)"),
    (("P2-S3", "902.00", "1"), "order.lines[1].discount: 1 (line 2)",
     "order.lines[1].discount (line 2): is above the largest discount MAX_DISCOUNT=0.10"),
    (("P2-S3", "902.00", "0.11"), "MAX_DISCOUNT=0.10", "order.lines[1].discount (line 2)"),
    (("P9-S9", "10.00", "0"), "order.lines[1].sku: SKU P9-S9 (line 2) is not priced",
     "order.lines[1].sku (line 2): the SKU is not priced"),
    (("p2-s3", "902.00", "0"), "order.lines[1].sku: SKU p2-s3 (line 2) is not priced",
     "order.lines[1].sku (line 2)"),
    (("P3-S4", "10.00", "0"), "order.lines[1].sku: SKU P3-S4 (line 2) is not priced",
     "order.lines[1].sku (line 2)"),
])
def test_an_order_priced_otherwise_than_the_catalogue_is_rejected_naming_the_line(
        env, bad, names, logged, caplog):
    """The client hears its own values; the log names the line and field, never a value."""
    stores, sent, now = env
    caplog.set_level(logging.INFO, logger="orders.submission")
    refused = submission.submit(body(GOOD, bad), stores, sent, now, client_id="acme",
                                message_id="m1", priced=True)
    assert isinstance(refused, submission.AdmissionRefused)
    assert stores.orders.get("acme~ORD-1") is None and stores.states.get("acme~ORD-1") is None
    [(order_id, status, _)] = sent.statuses()
    assert (order_id, status) == ("ORD-1", "Rejected")
    assert names in sent.messages[-1][1].body["reason"]
    [line] = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert logged in line
    sku, price, discount = bad
    assert not [v for v in (sku, price, f"discount: {discount}", "902.00") if v in line]


def test_catalogue_prices_in_another_currency_are_rejected_naming_the_currency(env):
    stores, sent, now = env
    refused = submission.submit(body(("P1-S2", "901.00", "0"), currency="JPY"), stores, sent, now,
                                client_id="acme", message_id="m1", priced=True)
    assert isinstance(refused, submission.AdmissionRefused)
    assert "order.currency: JPY; the catalogue prices in USD only" in refused.reason


def test_an_order_at_catalogue_prices_is_accepted(env):
    stores, sent, now = env
    accepted = submission.submit(body(GOOD, ("P2-S3", "902", "0.10")), stores, sent, now,
                                 client_id="acme", message_id="m1", priced=True)
    assert isinstance(accepted, submission.Accepted)
