"""One client's alerts cannot hide another client's on the dashboard (X10, issue 41).

The view under test is ``ops.dashboard.overview.queues`` over real SQLite stores and the
local queues: alerts are sent by the real ``alert_operator`` step, which collapses them per
client, kind and window, and the dashboard reads back until every client has its newest.
"""

import json
from datetime import UTC, datetime, timedelta

import pytest

from activities import steps
from ops.dashboard.overview import ALERTS_READ, DEAD_LETTERS_PER_QUEUE, fair_share, queues
from orders.messaging.browse import PeekedMessage
from orders.names import OPERATOR_ALERTS_QUEUE

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def services(local_queue_services):
    return local_queue_services


def order_error(services, key: str, reason: str) -> None:
    steps.alert_operator({"kind": "OrderError", "orderId": key, "instanceId": f"{key}:1",
                          "reason": reason}, services)


def shown(services) -> list[tuple[str, str, int]]:
    return [(a["body"]["kind"], a["body"].get("clientId"), a["count"])
            for a in queues(services)["alerts"]]


def test_500_out_of_stock_orders_of_one_client_leave_the_other_clients_alert_in_view(
        services):
    order_error(services, "shop-b~ORD-B", "charge failed permanently: declined")
    for n in range(500):  # one every 30 s: 250 minutes, 25 alert windows
        services.clock.advance(timedelta(seconds=30))
        order_error(services, f"shop-a~ORD-{n:05d}",
                    f"reserve_inventory failed permanently: out of stock: SKU SKU-1 (line 1) "
                    f"requested {n + 1}")
    rows = shown(services)
    assert ("OrderError", "shop-b", 1) in rows
    # Collapsed at the source: one alert per window, not one per order.
    assert ("OrderError", "shop-a", 26) in rows
    (newest_a,) = [a for a in queues(services)["alerts"]
                   if a["body"].get("clientId") == "shop-a"]
    assert "raise no new alert" in newest_a["body"]["reason"]


def test_the_dashboard_reads_back_past_a_flood_to_each_clients_newest_alert(services):
    order_error(services, "shop-b~ORD-B", "charge failed permanently: declined")
    for n in range(3 * ALERTS_READ):  # uncollapsed: distinct MessageIds, as an old app sent
        services.sender.send(OPERATOR_ALERTS_QUEUE, outgoing(n))
    assert ("OrderError", "shop-b", 1) in shown(services)


def outgoing(n: int):
    from orders.messaging import OutgoingMessage

    return OutgoingMessage(body={
        "schemaVersion": 1, "kind": "OverdueOrder", "reason": f"late {n}",
        "orderId": f"shop-a~ORD-{n:05d}", "at": "2030-01-01T00:00:00Z"},
        message_id=f"OverdueOrder:shop-a~ORD-{n:05d}:1")


def peeked(sequence: int, kind: str, client: str) -> PeekedMessage:
    return PeekedMessage(OPERATOR_ALERTS_QUEUE, sequence, str(sequence), None, 1, {},
                         json.loads(json.dumps({"kind": kind, "clientId": client})), None, None)


def test_each_client_gets_its_newest_group_before_any_client_gets_a_second():
    kinds = ["OrderError", "RetriesExhausted", "OverdueOrder", "ConflictingOrder"]
    groups = [(peeked(100 - n, kind, "shop-a"), 1) for n, kind in enumerate(kinds)]
    groups.append((peeked(1, "OrderError", "shop-b"), 1))
    chosen = fair_share(groups, 2)
    assert [(m.body["clientId"], m.body["kind"]) for m, _ in chosen] == [
        ("shop-a", "OrderError"), ("shop-b", "OrderError")]


def test_one_clients_flood_of_dead_letters_leaves_anothers_in_the_shared_view(services):
    """Azure forwards every dead letter to the one ``dead-letters`` queue (X10)."""
    from orders.messaging import OutgoingMessage
    from orders.messaging.settlement import DEAD_LETTERS_QUEUE, SOURCE_PROPERTY

    def forwarded(n: int, source: str) -> OutgoingMessage:
        return OutgoingMessage(body={"n": n}, message_id=f"{source}-{n}",
                               application_properties={SOURCE_PROPERTY: source})

    services.sender.send(DEAD_LETTERS_QUEUE, forwarded(0, "orders-shop-c"))
    for n in range(300):
        services.sender.send(DEAD_LETTERS_QUEUE, forwarded(n, "orders-shop-a"))
    services.sender.send(DEAD_LETTERS_QUEUE, forwarded(0, "orders-shop-b"))
    rows = [r for r in queues(services)["deadLettered"] if r["queue"] == DEAD_LETTERS_QUEUE]
    sources = [r["applicationProperties"][SOURCE_PROPERTY] for r in rows]
    assert sources.count("orders-shop-b") == sources.count("orders-shop-c") == 1
    assert sources.count("orders-shop-a") == DEAD_LETTERS_PER_QUEUE
    # The newest first: shop-b's, shop-a's newest 20, then shop-c's older one.
    assert [r["messageId"] for r in rows[:3]] == [
        "orders-shop-b-0", "orders-shop-a-299", "orders-shop-a-298"]
    assert rows[-1]["messageId"] == "orders-shop-c-0"
