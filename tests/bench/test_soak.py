"""The soak's per-window latency: every window gets the p99 of the orders that ended in it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bench.soak import Submits, Window, _p99_by_window
from client.submit import reply_queue_for, submit_message, submit_queue_for
from clocks import ManualClock
from demo import latency
from demo.clients import ClientBatch
from orders.models import ClientOrder, OrderLine
from sqlitebus import open_engine

START = datetime(2026, 12, 1, 23, 0, tzinfo=UTC)


def _order(n: int) -> ClientOrder:
    return ClientOrder(order_id=f"TPCH-{n}", customer_id="C", currency="USD",
                       lines=[OrderLine(sku="S", quantity=1, unit_price=Decimal("10"))],
                       total_price=Decimal("10"), created_at=START)


def test_each_window_has_the_p99_of_the_orders_that_finished_in_it(tmp_path):
    # One order 10 s into each 300 s window but the fourth, over 25 minutes: the submit
    # queue's history forgets a message after 10 minutes, as in the 25-minute soak.
    batch = ClientBatch("shop-a", tuple(_order(n) for n in range(4)))
    clock = ManualClock(START)
    submits, finished = Submits(tmp_path, [batch]), {}
    sent_at = {0: 10, 1: 310, 2: 610, 3: 1210}
    took_ms = {0: 900.0, 1: 400.0, 2: 250.0, 3: 120.0}
    with open_engine(tmp_path, clock=clock) as engine:
        for n, order in enumerate(batch.orders):
            clock.advance(START + timedelta(seconds=sent_at[n]) - clock.now())
            message = submit_message("shop-a", reply_queue_for("shop-a"), order)
            engine.send(submit_queue_for("shop-a"), json.dumps(message.body),
                        message_id=message.message_id)
            finished[batch.keys[n]] = clock.now() + timedelta(milliseconds=took_ms[n])
            submits.read()  # the soak reads once per window
    assert list(latency.submit_times(tmp_path, [batch])) == [batch.keys[3]]  # the rest forgot
    rows = [Window(end_s, 0, 0.0, None) for end_s in (300.0, 600.0, 900.0, 1200.0, 1500.0)]
    _p99_by_window(rows, submits.times, finished, START)
    assert [r.p99_ms for r in rows] == [900.0, 400.0, 250.0, None, 120.0]


def test_an_order_ending_on_a_window_bound_counts_in_the_next_window():
    rows = [Window(60.0, 0, 0.0, None), Window(120.0, 0, 0.0, None)]
    submitted = {"k": START + timedelta(seconds=59.5)}
    _p99_by_window(rows, submitted, {"k": START + timedelta(seconds=60)}, START)
    assert [r.p99_ms for r in rows] == [None, 500.0]
