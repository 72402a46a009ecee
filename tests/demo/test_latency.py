"""The demo's latency figures: percentiles, the stand-in's enqueued times, the offer pace."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from client.submit import reply_queue_for, submit_orders
from client.watch import OrderStatus, WatchResult
from clocks import ManualClock
from demo.clients import ClientBatch, offer_times
from demo.latency import Latency, latencies_ms, measure, percentile
from demo.summary import Summary
from orders.messaging.local import LocalMessageSender
from orders.models.messages import StatusKind
from tests.demo.test_clients import order

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(100, 0, -1)]  # 1..100, unsorted
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([7.0], 50) == 7.0
    assert percentile([1.0, 2.0], 50) == 1.0  # the lower middle value
    assert percentile([1.0, 2.0, 3.0], 99) == 3.0


@pytest.mark.parametrize("values, q", [([], 50), ([1.0], 0), ([1.0], 101)])
def test_percentile_rejects_empty_values_and_out_of_range_q(values, q):
    with pytest.raises(ValueError):
        percentile(values, q)


def test_latency_summarizes_milliseconds_and_is_none_without_values():
    lat = Latency.of([10.0, 30.0, 20.0, 400.0])
    assert lat is not None
    assert (lat.count, lat.p50_ms, lat.p95_ms, lat.p99_ms, lat.max_ms) == (
        4, 20.0, 400.0, 400.0, 400.0)
    assert Latency.of([]) is None


def test_latency_counts_only_orders_with_both_times():
    sub = {"a": T0, "b": T0 + timedelta(seconds=1)}
    fin = {"a": T0 + timedelta(milliseconds=250), "c": T0}
    assert latencies_ms(sub, fin) == [250.0]


def test_latency_runs_from_the_submit_enqueue_to_the_terminal_reply_enqueue(tmp_path):
    # The submit messages are completed (gone) by the time latency is measured: their
    # enqueued time comes from the queue's duplicate detection history.
    clock = ManualClock(T0)
    batch = ClientBatch("shop-a", (order(1), order(2)))
    sender = LocalMessageSender(data_dir=tmp_path, clock=clock)
    try:
        submit_orders(sender, batch.orders[:1], client_id="shop-a",
                      reply_to=reply_queue_for("shop-a"))
        clock.advance(timedelta(seconds=1))
        submit_orders(sender, batch.orders[1:], client_id="shop-a",
                      reply_to=reply_queue_for("shop-a"))
    finally:
        sender.close()

    def status(order_id, kind, enqueued_s):
        return OrderStatus(order_id, kind, T0, enqueued_time=T0 + timedelta(seconds=enqueued_s))

    heard = {"shop-a": WatchResult({"TPCH-1": status("TPCH-1", StatusKind.ORDER_COMPLETED, 0.3),
                                    "TPCH-2": status("TPCH-2", StatusKind.ORDER_FAILED, 3.0)},
                                   expect=2)}
    lat = measure(tmp_path, [batch], heard)
    assert lat is not None
    assert (lat.count, lat.p50_ms, lat.max_ms) == (2, 300.0, 2000.0)
    heard["shop-a"].statuses["TPCH-2"] = status("TPCH-2", StatusKind.REQUEST_RECEIVED, 3.0)
    assert measure(tmp_path, [batch], heard) == Latency(1, 300.0, 300.0, 300.0, 300.0)


def test_offer_times_give_each_client_its_share_of_the_rate():
    assert offer_times(3, 6, rate=10.0) == pytest.approx([0.0, 0.2, 0.4])
    assert offer_times(1, 1, rate=2.0) == [0.0]
    with pytest.raises(ValueError, match="rate"):
        offer_times(1, 1, rate=0.0)


def test_summary_line_ends_with_orders_per_s_and_latency_percentiles():
    summary = Summary(2, Counter(), 0, 0, 0, 0, 0, 12.34)
    assert summary.line().endswith(" orders_per_s=12.3 p50_ms=n/a p99_ms=n/a")
    summary.latency = Latency(2, 812.4, 900.0, 2300.6, 2300.6)
    assert summary.line().endswith(" orders_per_s=12.3 p50_ms=812 p99_ms=2301")
