"""Retention keeps what an unfinished order still needs (X10, S7).

An order in Error waits for an operator, who reads its attempts' histories on the
dashboard before resubmitting; its ended attempts must outlive RETENTION_DAYS while the
order itself is not finished.
"""

from datetime import timedelta

import pytest
from azure.durable_functions import DurableOrchestrationClient

from ops.retention import purge_instances
from tests.devhost.http_api.helpers import client_binding_json, run
from tests.e2e.checks import lose_order_row, submit_unstarted
from tests.e2e.harness import ProcessState, key, make_order
from tests.ops.test_dashboard_api import get


@pytest.mark.xfail(strict=True, reason="the purge goes by the instance's status and age "
                   "only: the Failed attempts of an order in Error are purged")
def test_the_attempts_of_an_order_in_error_outlive_the_retention(make_system, monkeypatch):
    system = make_system()
    order = make_order(3)
    submit_unstarted(system, monkeypatch, [order])
    lose_order_row(system, key(order))  # every attempt fails: Error after MAX_FAILURES
    system.run(200)
    assert system.state(order.order_id).process_state is ProcessState.ERROR
    system.clock.advance(timedelta(days=31))
    client = DurableOrchestrationClient(client_binding_json(system.host.taskhub.name,
                                                            system.host.base_url))
    run(purge_instances(client, system.clock.now(), retention_days=30))
    detail = get(system, "/api/order", client="acme", orderId=order.order_id).json()
    assert [(a["status"] or {}).get("runtimeStatus") for a in detail["attempts"]] == \
        ["Failed"] * 3
