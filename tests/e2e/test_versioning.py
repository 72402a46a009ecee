"""Workflow versioning end to end (SPEC X6): orders finish under the version they started."""

import json

from orchestrators import order_workflow
from tests.e2e.harness import ProcessState, make_order


def kinds(system, order_id):
    return [e.kind for e in system.effects(order_id=order_id)]


def test_v1_order_in_flight_finishes_under_v1_after_v2_is_registered_and_selected(
        make_system, monkeypatch):
    monkeypatch.delitem(order_workflow.WORKFLOWS, 2)  # a deployment that knows only v1
    system = make_system(settings={"WORKFLOW_VERSION": "1"})
    old, new = make_order(51), make_order(52)
    system.submit(old)
    with system.paused("payment-requests"):
        system.run(1.5)  # attempt 1 of the v1 order waits for its charge reply
        assert system.engine.counts("payment-requests").active == 1
        # Deploy v2 and make it the version new orders start under.
        monkeypatch.setitem(order_workflow.WORKFLOWS, 2, order_workflow.run_v2)
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
    first = system.host.taskhub.get_instance(f"{old.order_id}:1")
    assert json.loads(first.input)["workflowVersion"] == 1
    logged = [e.step.value for e in system.services.stores.compensation.entries(old.order_id)]
    assert logged == ["reserve_inventory", "charge_requested", "charge", "ship_requested",
                      "ship"]
    assert all(e.workflow_version == 1
               for e in system.services.stores.compensation.entries(old.order_id))


def test_unknown_workflow_version_alerts_an_operator_instead_of_crashing(make_system):
    order = make_order(53)
    system = make_system(settings={"WORKFLOW_VERSION": "9"})
    system.submit(order)
    system.run(5)
    attempt = system.host.taskhub.get_instance(f"{order.order_id}:1")
    assert attempt.runtime_status == "Completed"
    assert json.loads(attempt.output) == {"outcome": "unknownWorkflowVersion"}
    alerts = system.alerts()
    assert [a["kind"] for a in alerts] == ["UnknownWorkflowVersion"]
    assert "workflow version 9 is not registered; known: [1, 2]" in alerts[0]["reason"]
    assert system.state(order.order_id).process_state == ProcessState.PROCESSING
    # Nothing ran, so when the supervisor gives up there is nothing to undo: Error.
    system.run(300)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.ERROR and record.failure_count == 3
    assert system.services.stores.compensation.entries(order.order_id) == []
    assert [a["kind"] for a in system.alerts()][-1] == "RetriesExhausted"
    assert [m["status"] for m in system.replies()] == ["RequestReceived", "OrderFailed"]
    assert kinds(system, order.order_id) == []
