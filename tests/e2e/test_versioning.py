"""Workflow versioning end to end (X6): orders finish under the version they started."""

import json
from datetime import timedelta

from orchestrators import frozen_workflows, order_workflow
from orders.models import Order, StateRecord
from orders.names import WORKFLOW_VERSIONS
from tests.e2e.harness import ProcessState, key, make_order


def kinds(system, order_id):
    return [e.kind for e in system.effects(order_id=order_id)]


def test_v1_order_in_flight_finishes_under_v1_after_v2_is_registered_and_selected(
        make_system, monkeypatch):
    for version in (2, 3, 4):  # a deployment that knows only v1
        monkeypatch.delitem(order_workflow.WORKFLOWS, version)
    system = make_system(settings={"WORKFLOW_VERSION": "1"})
    old, new = make_order(51), make_order(52)
    system.submit(old)
    with system.paused("payment-requests"):
        system.run(1.5)  # attempt 1 of the v1 order waits for its charge reply
        assert system.engine.counts("payment-requests").active == 1
        # Deploy v2 and make it the version new orders start under.
        monkeypatch.setitem(order_workflow.WORKFLOWS, 2, frozen_workflows.run_v2)
        svc = system.services
        svc.settings = svc.settings.model_copy(update={"WORKFLOW_VERSION": 2})
        system.submit(new)
        system.run(1.5)  # the v2 order ships first, then waits for its charge reply
        assert kinds(system, new.order_id) == ["ship"]
    system.run(10)
    assert system.states([old.order_id, new.order_id]) == {ProcessState.PROCESSED: 2}
    assert system.state(old.order_id).workflow_version == 1
    assert system.state(new.order_id).workflow_version == 2
    assert kinds(system, old.order_id) == ["charge", "ship"]  # v1's step order
    assert kinds(system, new.order_id) == ["ship", "charge"]  # v2's step order
    first = system.host.taskhub.get_instance(f"{key(old)}:1")
    # The stored input is the SDK's JSON text as a JSON string (as the extension stores it).
    assert json.loads(json.loads(first.input))["workflowVersion"] == 1
    logged = [e.step.value for e in system.services.stores.compensation.entries(key(old))]
    assert logged == ["reserve_inventory", "charge_requested", "charge", "ship_requested",
                      "ship"]
    assert all(e.workflow_version == 1
               for e in system.services.stores.compensation.entries(key(old)))


def test_each_attempt_runs_under_its_order_s_orchestration_version(make_system):
    order = make_order(54)
    system = make_system(settings={"WORKFLOW_VERSION": "2"})
    system.submit(order)
    system.run(10)
    attempt = system.host.taskhub.get_instance(f"{key(order)}:1")
    assert attempt.version == "2.0"  # the platform's version, as host.json allows (X6)
    assert kinds(system, order.order_id) == ["ship", "charge"]


def test_an_attempt_started_without_a_version_runs_the_version_of_its_input(make_system):
    # Attempts started before orchestration versions were set carry only the input's
    # workflowVersion; the dispatcher falls back to it (X6). Such an order is also
    # from before client queues: a legacy record, keyed on its plain OrderID, no clientId.
    system = make_system()
    order = make_order(55)
    system.services.stores.orders.create_if_absent(Order.of_client(order, order.order_id))
    record = StateRecord.new(order.order_id, "replies-acme", system.clock.now())
    system.services.stores.states.create_if_absent(record.model_copy(update={
        "process_state": ProcessState.PROCESSING, "attempt": 1, "workflow_version": 2,
        "locked_by": f"{order.order_id}:1",
        "complete_by": system.clock.now() + timedelta(seconds=60)}))
    system.host.taskhub.create_instance("order_workflow", f"{order.order_id}:1", json.dumps({
        "orderId": order.order_id, "attempt": 1, "workflowVersion": 2, "deadlineS": 30,
        "agentMaxAttempts": 3}), version="")
    system.run(10)
    assert system.host.taskhub.get_instance(f"{order.order_id}:1").version == ""
    legacy = system.services.stores.states.get(order.order_id)
    assert (legacy.process_state, legacy.client_id) == (ProcessState.PROCESSED, None)
    effects = system.ledger.side_effects(order_key=order.order_id)
    assert [(e.kind, e.idempotency_key) for e in effects] == [
        ("ship", "ORD-00055:ship"), ("charge", "ORD-00055:charge")]
    assert [(m["orderId"], m["status"]) for m in system.replies()] == [
        ("ORD-00055", "OrderCompleted")]


def test_an_unregistered_workflow_version_starts_no_new_order_and_alerts(make_system,
                                                                         monkeypatch):
    order = make_order(53)
    unknown = max(WORKFLOW_VERSIONS) + 1
    system = make_system(settings={"WORKFLOW_VERSION": str(unknown)})
    system.submit(order)
    system.run(5)
    # Nothing was started under a version this code does not have; the order waits.
    assert system.host.taskhub.get_instance(f"{key(order)}:1") is None
    assert system.state(order.order_id).process_state == ProcessState.PENDING
    alerts = system.alerts()
    assert [a["kind"] for a in alerts] == ["UnknownWorkflowVersion"]  # once, not per run
    assert (f"WORKFLOW_VERSION={unknown} is not registered (known: "
            f"{list(WORKFLOW_VERSIONS)})" in alerts[0]["reason"])
    # The operator fixes the setting: the order starts and completes under version 1.
    svc = system.services
    monkeypatch.setattr(svc, "settings", svc.settings.model_copy(update={"WORKFLOW_VERSION": 1}))
    system.run(10)
    assert system.state(order.order_id).process_state == ProcessState.PROCESSED
    assert system.host.taskhub.get_instance(f"{key(order)}:1").version == "1.0"
    assert kinds(system, order.order_id) == ["charge", "ship"]


def scheduled(system, instance_id):
    return [e["Name"] for e in system.host.taskhub.get_history(instance_id)
            if e["EventType"] == 4]  # TaskScheduled


def test_v1_and_v2_orders_in_flight_finish_on_theirs_while_new_orders_start_on_v3(
        make_system, monkeypatch):
    for version in (3, 4):  # a deployment that knows v1 and v2
        monkeypatch.delitem(order_workflow.WORKFLOWS, version)
    system = make_system(settings={"WORKFLOW_VERSION": "1"})
    svc = system.services
    v1, v2, v3 = make_order(56), make_order(57), make_order(58)
    with system.paused("payment-requests"):
        system.submit(v1)
        system.run(1.5)  # waits for its charge reply
        svc.settings = svc.settings.model_copy(update={"WORKFLOW_VERSION": 2})
        system.submit(v2)
        system.run(1.5)  # shipped, waits for its charge reply
        # Deploy versions 3 and 4 and select 3 for new orders (docs/deploy.md).
        monkeypatch.setitem(order_workflow.WORKFLOWS, 3, frozen_workflows.run_v3)
        monkeypatch.setitem(order_workflow.WORKFLOWS, 4, frozen_workflows.run_v4)
        svc.settings = svc.settings.model_copy(update={"WORKFLOW_VERSION": 3})
        system.submit(v3)
        system.run(1.5)
        assert system.engine.counts("payment-requests").active == 3
    system.run(10)
    orders = [v1, v2, v3]
    assert system.states(o.order_id for o in orders) == {ProcessState.PROCESSED: 3}
    assert [system.state(o.order_id).workflow_version for o in orders] == [1, 2, 3]
    attempts = [system.host.taskhub.get_instance(f"{key(o)}:1") for o in orders]
    assert [a.version for a in attempts] == ["1.0", "2.0", "3.0"]
    assert [kinds(system, o.order_id) for o in orders] == [
        ["charge", "ship"], ["ship", "charge"], ["charge", "ship"]]
    v1_steps = ["begin_attempt", "load_order", "reserve_inventory", "record_step",
                "send_agent_request", "record_step", "send_agent_request", "record_step",
                "finish_attempt", "publish_status"]
    assert scheduled(system, attempts[0].instance_id) == v1_steps
    assert scheduled(system, attempts[1].instance_id) == v1_steps
    assert scheduled(system, attempts[2].instance_id) == [
        "begin_attempt", "reserve_inventory", "send_agent_request", "send_agent_request",
        "finish_attempt"]
    logs = [[e.step.value for e in svc.stores.compensation.entries(key(o))] for o in orders]
    assert logs[0] == logs[2] == ["reserve_inventory", "charge_requested", "charge",
                                  "ship_requested", "ship"]
