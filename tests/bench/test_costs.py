import json
import sqlite3

import pytest

from bench import cost_report, costs, prices
from devhost.taskhub.schema import SCHEMA
from orders.stores.sqlite_orders import SqliteOrderStore
from simulator.ledger import Ledger
from sqlitebus.engine import ServiceBusEngine
from tests.orders.stores.store_builders import make_order
from tests.support.stores import count_store_operations, counted_store_operations

# One fault-free order of workflow version 1 as the task hub records it: 13 episodes, 10
# activities, 2 timers (cancelled when the reply won), 2 replies raised as events.
ORDER_EVENTS = {0: 1, 12: 13, 13: 13, 4: 10, 5: 10, 10: 2, 15: 2, 1: 1}


def _taskhub(path, instances):
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for k in range(instances):
        iid = f"shop-a~TPCH-{k}:1"
        conn.execute("INSERT INTO instances (instance_id, name, runtime_status, created_at, "
                     "last_updated_at, execution_id, replay_state) VALUES (?, "
                     "'order_workflow', 'Completed', 't', 't', 'e', '{}')", (iid,))
        events = [t for t, n in ORDER_EVENTS.items() for _ in range(n)]
        conn.executemany("INSERT INTO history VALUES (?, ?, ?)",
                         [(iid, i, json.dumps({"EventType": t})) for i, t in enumerate(events)])
    conn.commit()
    conn.close()


def test_taskhub_counts_read_the_history_per_orchestrator(tmp_path):
    _taskhub(tmp_path / "taskhub.sqlite", 3)
    assert costs.taskhub_counts(tmp_path / "taskhub.sqlite") == {"order_workflow": {
        "instances": 3, "episodes": 39, "starts": 3, "activities": 30, "timers": 6,
        "timers_fired": 0, "events_raised": 6, "suborchestrations": 0}}


def test_attempt_profiles_give_the_mean_cost_of_one_attempt_per_outcome(tmp_path):
    path = tmp_path / "taskhub.sqlite"
    _taskhub(path, 2)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE instances SET output = '{\"outcome\": \"processed\"}'")
    conn.commit()
    conn.close()
    profile = costs.attempt_profiles(path)["order_workflow:processed"]
    assert profile["instances"] == 2
    assert (profile["episodes"], profile["activities"], profile["timers"]) == (13, 10, 2)
    assert profile["dts_actions"] == 25  # 1 start + 2 x 10 activities + 2 events + 2 timers


def test_servicebus_operations_are_counted_per_queue_in_the_bus_file(tmp_path):
    bus = ServiceBusEngine(tmp_path / "servicebus.sqlite")
    bus.send_many("payment-requests", [])  # an empty batch is still a call
    for k in range(3):
        bus.send("payment-requests", f"charge {k}", message_id=f"m{k}")
    assert bus.send("payment-requests", "again", message_id="m0") is False  # duplicate
    first, second = bus.receive("payment-requests", max_count=2)
    bus.complete("payment-requests", first.lock_token)
    bus.abandon("payment-requests", second.lock_token)
    (third,) = bus.receive("payment-requests", max_count=1)
    bus.renew_lock("payment-requests", third.lock_token)
    bus.dead_letter("payment-requests", third.lock_token, reason="InvalidJson")
    assert bus.receive("payment-requests") != []  # the abandoned one again
    bus.close()
    assert costs.servicebus_counts(tmp_path / "servicebus.sqlite") == {
        "payment-requests": {"send_calls": 5, "sent": 3, "receive_calls": 3, "delivered": 4,
                             "completes": 1, "abandons": 1, "lock_renewals": 1,
                             "dead_letters": 1}}


def test_store_operations_are_counted_as_cosmos_db_would_see_them(tmp_path, monkeypatch):
    count_store_operations(tmp_path, monkeypatch)
    store = SqliteOrderStore(tmp_path / "orders.sqlite")
    order = make_order()
    store.create_if_absent(order)
    store.create_if_absent(order)  # exists: a write refused, then a point read to compare
    assert store.get(order.order_key) == order
    store.close()
    doc = counted_store_operations()
    assert doc["counts"] == {"orders": {"point_read": 2, "write": 2}}
    assert doc["callers"] == {"other": {"orders.point_read": 2, "orders.write": 2}}


def test_store_counts_sum_the_host_processes_only(tmp_path):
    host = {"argv": ["/app/devhost/__main__.py", "start"],
            "counts": {"state": {"point_read": 4, "write": 6}},
            "callers": {"supervisor.blueprint.supervisor": {"state.query": 9}}}
    worker = {"argv": ["/app/devhost/__main__.py", "worker"],
              "counts": {"state": {"write": 2, "query": 1}, "orders": {"point_read": 3}}}
    demo = {"argv": ["/app/demo/__main__.py", "--orders"],
            "counts": {"inventory": {"write": 61}}}
    for pid, doc in ((1, host), (2, worker), (3, demo)):
        (tmp_path / f"store-ops-{pid}.json").write_text(json.dumps(doc))
    assert costs.store_counts(tmp_path) == {"orders": {"point_read": 3},
                                            "state": {"point_read": 4, "write": 8, "query": 1}}
    assert costs.store_callers(tmp_path) == {"supervisor.blueprint.supervisor": {"state.query": 9}}


def test_http_calls_are_the_simulator_ledger_requests(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for _ in range(3):  # two retries
            ledger.record_request("payment", "shop-a~TPCH-1", "charge")
        ledger.record_request("shipping", "shop-a~TPCH-1", "ship")
    assert costs.http_calls(tmp_path / "ledger.sqlite") == {"payment.charge": 3,
                                                            "shipping.ship": 1}


def _counts():
    # 20 fault-free orders as the demo's run of 20 counted them.
    return {"taskhub": {"order_workflow": {"instances": 20, "episodes": 260, "starts": 20,
                                           "activities": 200, "timers": 40, "timers_fired": 0,
                                           "events_raised": 40, "suborchestrations": 0}},
            "servicebus": {"payment-requests": {"send_calls": 20, "sent": 20,
                                                "receive_calls": 10, "delivered": 20,
                                                "completes": 20},
                           "orders-shop-a": {"send_calls": 120, "sent": 120,
                                             "receive_calls": 90, "delivered": 120,
                                             "completes": 120}},
            "stores": {"state": {"point_read": 60, "write": 100, "query": 40}},
            "http": {"payment.charge": 22, "shipping.ship": 20}}


def test_per_order_counts_and_dollars_per_thousand_orders():
    each = costs.per_order(_counts(), 20)
    # 20 starts + 2 x 200 activities + 40 events + 40 timers = 500 actions
    assert each["taskhub"]["dts_actions"] == 25.0
    assert each["taskhub"]["episodes"] == 13.0
    # 140 send calls + 140 deliveries (one receive each on Azure) + 140 completes
    assert each["servicebus"]["operations"] == 21.0
    assert each["servicebus"]["delivered"] == 7.0
    # 60 x 1 + 100 x 6 + 40 x 3 = 780 RU
    assert each["stores"]["ru"] == 39.0
    assert each["http"] == {"remote": 2.1, "durable_client": 3.0}
    usd = each["usd_per_1000"]
    assert usd["dts"] == pytest.approx(0.075)  # 25,000 actions at $3 per million
    assert usd["servicebus"] == pytest.approx(0.0168)  # 21,000 operations at $0.80
    assert usd["cosmos"] == pytest.approx(0.00975)  # 39,000 RU at $0.25
    assert usd["total"] == pytest.approx(0.10155)


def test_per_order_refuses_a_run_without_orders():
    with pytest.raises(ValueError, match="orders: must be at least 1"):
        costs.per_order(_counts(), 0)


def test_a_price_costs_its_units():
    assert prices.COSMOS_RU.cost(4_000_000) == 1.0
    assert prices.SERVICEBUS_OPERATION.cost(1_000_000) == 0.80


def test_the_cost_section_renders_counts_dollars_and_named_prices():
    per_order = costs.per_order(_counts(), 20)
    counted = {**_counts(), "attempts": {"order_workflow:processed": {
        "instances": 20, "episodes": 13.0, "activities": 10.0, "timers": 2.0,
        "events_raised": 2.0, "dts_actions": 25.0}}}
    runs = [{"faults": "none", "offered": "full speed", "host": {"cost": {
        "counts": counted, "per_order": per_order}}}]
    text = "\n".join(cost_report.cost_lines(runs))
    assert "| per order | no faults, full speed |" in text
    assert "| **Durable Task Scheduler actions** | 25.00 |" in text
    assert "| **Service Bus operations billed** | 21.00 |" in text
    assert "| $ per 1,000 orders: Durable Task Scheduler | 0.0750 |" in text
    assert "https://azure.microsoft.com/pricing/details/service-bus/" in text
    assert "| order_workflow:processed | 20 | 13.0 | 10.0 | 2.0 | 2.0 | 25.0 |" in text
    assert "| order_workflow:processed |" in text
    measured = cost_report.cost_lines(runs, measured="From another run.")
    assert measured[:3] == ["## Cost per order on Azure", "", "From another run."]
    assert cost_report.cost_lines([{"faults": "none", "offered": "x", "host": {}}]) == []
