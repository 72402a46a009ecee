"""Workflow versions 3 to 8 end to end: version 1's and 2's effects, in the same order, from
five activities per fault-free attempt instead of ten (3, 4), or four, the reservation made
by the first (5, 6), or three, the first request sent by the first too, with one durable timer
per attempt (7, 8; X6, S8, S9), or a timer per remote step again (the live 9 and 10), whose
CompleteBy ends the attempt even during the second step."""

from collections import Counter

import pytest

from tests.e2e.harness import ProcessState, key, make_order
from tests.e2e.test_final_status import refuse_final_statuses

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}
MERGED = ["begin_attempt", "reserve_inventory", "send_agent_request", "send_agent_request",
          "finish_attempt"]


def activities(system, instance_id):
    return [e["Name"] for e in system.host.taskhub.get_history(instance_id)
            if e["EventType"] == 4]  # TaskScheduled


def logged(system, order):
    return [(e.step.value, e.workflow_version)
            for e in system.services.stores.compensation.entries(key(order))]


def statuses(system, order):
    return [m["status"] for m in system.replies() if m["orderId"] == order.order_id]


def stock_for(system, *orders, units=10):
    system.services.stores.inventory.load(
        {line.sku: units for order in orders for line in order.lines})


V3 = {"WORKFLOW_VERSION": "3"}
FOUR = [name for name in MERGED if name != "reserve_inventory"]
THREE = ["begin_attempt", "send_agent_request", "finish_attempt"]


def timers(system, instance_id):
    return sum(e["EventType"] == 10 for e in system.host.taskhub.get_history(instance_id))


@pytest.mark.parametrize("version, scheduled, timers_created", [
    (3, MERGED, 2), (5, FOUR, 2), (7, THREE, 1), (9, THREE, 2)])
def test_a_new_order_runs_version_3_in_five_activities_5_in_four_and_7_in_three(
        make_system, version, scheduled, timers_created):
    # Versions 7 and 9: begin_attempt also reserves and sends the charge request; 9, the
    # one the app ships (WORKFLOW_VERSION), races each reply against a timer of its own.
    system = make_system(settings={"WORKFLOW_VERSION": str(version)})
    order = make_order(81)
    stock_for(system, order)
    system.submit(order)
    system.run(10)
    record = system.state(order.order_id)
    assert (record.process_state, record.workflow_version) == (ProcessState.PROCESSED,
                                                               version)
    assert record.complete_by is None  # the final status was sent and noted
    attempt = system.host.taskhub.get_instance(f"{key(order)}:1")
    assert attempt.version == f"{version}.0"
    assert activities(system, attempt.instance_id) == scheduled
    assert timers(system, attempt.instance_id) == timers_created
    # The log is version 1's, entry for entry.
    assert logged(system, order) == [(step, version) for step in (
        "reserve_inventory", "charge_requested", "charge", "ship_requested", "ship")]
    assert statuses(system, order) == ["RequestReceived", "OrderCompleted"]
    assert Counter(e.kind for e in system.effects(order_id=order.order_id)) == {
        "charge": 1, "ship": 1}
    inventory = system.services.stores.inventory
    assert [inventory.get(line.sku).available for line in order.lines] == [
        10 - line.quantity for line in order.lines]


def test_a_version_3_order_declined_after_the_charge_is_refunded_and_released(make_system):
    order = make_order(82)
    system = make_system(faults={"shipping": {"decline": {key(order): SHIP_DECLINE}}},
                         settings=V3)
    stock_for(system, order)
    system.submit(order)
    system.run(30)
    record = system.state(order.order_id)
    assert (record.process_state, record.workflow_version) == (ProcessState.COMPENSATED, 3)
    assert [step for step, _ in logged(system, order)] == [
        "reserve_inventory", "charge_requested", "charge", "ship_requested",
        "cancel_shipment", "refund", "release_inventory"]
    # Money balances: the one charge was refunded in full; nothing was shipped.
    (charge,) = system.effects(kind="charge", order_id=order.order_id)
    (refund,) = system.effects(kind="refund", order_id=order.order_id)
    assert refund.ref_id == charge.resource_id
    assert refund.amount == charge.amount == str(order.total_price)
    assert system.effects(kind="ship", order_id=order.order_id) == []
    # Stock balances: every unit reserved went back.
    inventory = system.services.stores.inventory
    assert [inventory.get(line.sku).available for line in order.lines] == [10, 10]
    assert all(item.balanced for item in inventory.items())
    assert statuses(system, order) == ["RequestReceived", "Compensated"]


@pytest.mark.parametrize("version", [4, 6, 8])
def test_a_version_4_6_or_8_order_whose_charge_is_declined_cancels_its_shipment(
        make_system, version):
    order = make_order(83)
    system = make_system(faults={"payment": {"decline": {key(order): {
        "status": 402, "reason": "card_declined"}}}},
        settings={"WORKFLOW_VERSION": str(version)})
    stock_for(system, order)
    system.submit(order)
    system.run(30)
    record = system.state(order.order_id)
    assert (record.process_state, record.workflow_version) == (ProcessState.COMPENSATED,
                                                               version)
    assert [step for step, _ in logged(system, order)] == [
        "reserve_inventory", "ship_requested", "ship", "charge_requested", "refund",
        "cancel_shipment", "release_inventory"]
    assert [e.kind for e in system.effects(order_id=order.order_id)] == ["ship", "cancel"]
    inventory = system.services.stores.inventory
    assert [inventory.get(line.sku).available for line in order.lines] == [10, 10]
    assert all(item.balanced for item in inventory.items())
    assert statuses(system, order) == ["RequestReceived", "Compensated"]


def test_a_status_send_failing_inside_finish_attempt_is_resent_by_the_supervisor(
        make_system, monkeypatch):
    system = make_system(settings=V3)
    order = make_order(84)
    refused = refuse_final_statuses(system, monkeypatch, 1)
    system.submit(order)
    system.run(600)
    record = system.state(order.order_id)
    assert record.process_state is ProcessState.PROCESSED and record.complete_by is None
    assert len(refused) == 1  # finish_attempt's send; the supervisor's resend went through
    assert statuses(system, order) == ["RequestReceived", "OrderCompleted"]
    attempt = system.host.taskhub.get_instance(record.locked_by)
    assert attempt.runtime_status == "Completed" and '"processed"' in attempt.output
    assert activities(system, attempt.instance_id) == MERGED  # no publish_status of its own


@pytest.mark.parametrize("version, second, runtime_status", [
    (9, "shipping", "Completed"), (10, "payment", "Completed"), (7, "shipping", "Running")])
def test_a_deadline_passing_during_the_second_step_ends_the_live_versions_attempt_at_once(
        make_system, version, second, runtime_status):
    # The SDK leaves a timer raced before out of the second race's WhenAny, and the
    # extension awaits that WhenAny: version 7's one timer fires, yet the attempt stays
    # Running until the second reply arrives (frozen, docs/pipeline.md). Versions 9 and 10
    # race each reply against a timer of its own: the attempt ends at CompleteBy, left for
    # the supervisor.
    system = make_system(settings={"WORKFLOW_VERSION": str(version)})
    order = make_order(88)
    stock_for(system, order)
    system.submit(order)
    with system.paused(f"{second}-requests"):
        system.run(5)  # the first step confirmed, the second sent and unanswered
        attempt = f"{key(order)}:1"
        assert system.durable.status(attempt)["runtimeStatus"] == "Running"
        system.run(30)  # CompleteBy (30 s after the start) passes
        status = system.durable.status(attempt)
    assert status["runtimeStatus"] == runtime_status
    if runtime_status == "Completed":
        step = "ship" if second == "shipping" else "charge"
        assert status["output"] == {"outcome": "timedOut", "step": step}
