"""Two host processes share one task hub, queues and stores (V4, issue 4).

Two starters, two supervisors and two of each agent work on 150 orders with faults, on the
real clock. Every attempt must be started once, every recovery made once, every order end
terminal, and no side effect happen twice.
"""

import time
from collections import Counter

import pytest

from client.submit import submit_orders
from demo import processes
from demo.stage import DEMO_SETTINGS, REPO
from demo.summary import TERMINAL
from orders.messaging import create_sender
from orders.stores import create_stores
from simulator.ledger import Ledger
from tests.e2e.harness import key, make_order

pytestmark = pytest.mark.slow(expected_s=15)


def test_two_hosts_150_orders_with_faults(tmp_path):
    orders = [make_order(n) for n in range(150)]
    faults = {"seed": 3, "all": {"transient_rate": 0.1},
              "payment": {"transient_rate": 0.1,
                          "black_hole_order_ids": [key(o, "pair") for o in orders[::20]],
                          "black_hole_first_n": 1, "black_hole_performs_effect": True}}
    sim, url = processes.simulator(tmp_path, faults)
    env = {**DEMO_SETTINGS, "PAYMENT_API_URL": url, "SHIPPING_API_URL": url,
           "ORDER_DEADLINE_S": "4", "AGENT_CALL_TIMEOUT_S": "1", "MAX_PROCESSING": "80",
           "ORDER_CLIENTS": "pair"}
    hosts = [processes.host(REPO, tmp_path, env) for _ in range(2)]
    sim.start()
    for h in hosts:
        h.start()
    stores = create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                           state_path=tmp_path / "state.sqlite")
    try:
        sender = create_sender("local", data_dir=tmp_path)
        submit_orders(sender, orders, client_id="pair", reply_to="replies-pair")
        deadline = time.monotonic() + 240
        records = {}
        while time.monotonic() < deadline:
            records = {key(o, "pair"): stores.states.get(key(o, "pair")) for o in orders}
            if all(r is not None and r.process_state in TERMINAL for r in records.values()):
                break
            time.sleep(0.5)
    finally:
        for h in hosts:
            h.stop()
        sim.stop()
    states = Counter(r.process_state for r in records.values() if r)
    assert all(r is not None and r.process_state in TERMINAL for r in records.values()), states
    from devhost.run.clock import SystemClock
    from devhost.taskhub.store import TaskHub

    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for order_key, record in records.items():
        attempts = [hub.get_instance(f"{order_key}:{n}") for n in range(1, record.attempt + 1)]
        assert all(a is not None for a in attempts), order_key
        assert hub.get_instance(f"{order_key}:{record.attempt + 1}") is None
        for a in attempts:
            started = [e for e in hub.get_history(a.instance_id) if e["EventType"] == 0]
            assert len(started) == 1, a.instance_id
        # each recovery increments FailureCount once and leads to exactly one new attempt,
        # except the last one, which gives up at MAX_FAILURES
        gave_up = record.failure_count == int(env["MAX_FAILURES"])
        expected = record.attempt if gave_up else record.attempt - 1
        assert record.failure_count == expected, (order_key, record)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        duplicates = {k: n for k, n in ledger.effect_counts().items() if n > 1}
    assert duplicates == {}
