"""Retention keeps what an unfinished order still needs (X10, S7).

An order in Error waits for an operator, who reads its attempts' histories on the
dashboard before resubmitting; its ended attempts must outlive RETENTION_DAYS while the
order itself is not finished.
"""

from datetime import timedelta

from azure.durable_functions import DurableOrchestrationClient

from ops.retention import purge_instances
from tests.devhost.http_api.helpers import client_binding_json, run
from tests.e2e.checks import lose_order_row, submit_unstarted
from tests.e2e.harness import ProcessState, key, make_order
from tests.ops.test_dashboard_api import get


def purge_31_days_later(system):
    """Let 31 days pass, run the retention pass (RETENTION_DAYS 30); return what it purged."""
    system.clock.advance(timedelta(days=31))
    client = DurableOrchestrationClient(client_binding_json(system.host.taskhub.name,
                                                            system.host.base_url))
    return run(purge_instances(client, system.clock.now(), 30, system.services.stores.states))


def test_the_attempts_of_an_order_in_error_outlive_the_retention(make_system, monkeypatch):
    system = make_system()
    order = make_order(3)
    submit_unstarted(system, monkeypatch, [order])
    lose_order_row(system, key(order))  # every attempt fails: Error after MAX_FAILURES
    system.run(200)
    assert system.state(order.order_id).process_state is ProcessState.ERROR
    assert purge_31_days_later(system) == 0
    detail = get(system, "/api/order", client="acme", orderId=order.order_id).json()
    assert [(a["status"] or {}).get("runtimeStatus") for a in detail["attempts"]] == \
        ["Failed"] * 3


def test_the_attempts_of_a_finished_order_go_after_the_retention(make_system):
    system = make_system()
    done = make_order(4)
    system.submit(done)
    system.run(20)
    assert system.state(done.order_id).process_state is ProcessState.PROCESSED
    assert purge_31_days_later(system) == 1
    assert system.host.taskhub.get_instance(f"{key(done)}:1") is None
