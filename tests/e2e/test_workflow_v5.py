"""Workflow versions 5 and 6 end to end: version 3's and 4's effects, in the same order, with
the reservation made by the attempt's first activity: four activities per fault-free
attempt (X6, S8, S9)."""

from collections import Counter

from tests.e2e.harness import ProcessState, key, make_order
from tests.e2e.test_workflow_v3 import activities, logged, statuses, stock_for

FOUR = ["begin_attempt", "send_agent_request", "send_agent_request", "finish_attempt"]


def test_a_new_order_runs_version_5_in_four_activities(make_system):
    system = make_system()  # WORKFLOW_VERSION as the app ships it
    order = make_order(91)
    stock_for(system, order)
    system.submit(order)
    system.run(10)
    record = system.state(order.order_key)
    assert (record.process_state, record.workflow_version) == (ProcessState.PROCESSED, 5)
    assert record.complete_by is None  # the final status was sent and noted
    attempt = system.host.taskhub.get_instance(f"{key(order)}:1")
    assert attempt.version == "5.0" and activities(system, attempt.instance_id) == FOUR
    # The log is version 1's, entry for entry.
    assert logged(system, order) == [("reserve_inventory", 5), ("charge_requested", 5),
                                     ("charge", 5), ("ship_requested", 5), ("ship", 5)]
    assert statuses(system, order) == ["RequestReceived", "OrderCompleted"]
    assert Counter(e.kind for e in system.effects(order_id=order.order_key)) == {
        "charge": 1, "ship": 1}
    inventory = system.services.stores.inventory
    assert [inventory.get(line.sku).available for line in order.lines] == [
        10 - line.quantity for line in order.lines]


def test_a_version_6_order_whose_charge_is_declined_cancels_its_shipment_and_releases(
        make_system):
    order = make_order(92)
    system = make_system(faults={"payment": {"decline": {key(order): {
        "status": 402, "reason": "card_declined"}}}}, settings={"WORKFLOW_VERSION": "6"})
    stock_for(system, order)
    system.submit(order)
    system.run(30)
    record = system.state(order.order_key)
    assert (record.process_state, record.workflow_version) == (ProcessState.COMPENSATED, 6)
    assert [step for step, _ in logged(system, order)] == [
        "reserve_inventory", "ship_requested", "ship", "charge_requested", "refund",
        "cancel_shipment", "release_inventory"]
    assert [e.kind for e in system.effects(order_id=order.order_key)] == ["ship", "cancel"]
    inventory = system.services.stores.inventory
    assert [inventory.get(line.sku).available for line in order.lines] == [10, 10]
    assert all(item.balanced for item in inventory.items())
    assert statuses(system, order) == ["RequestReceived", "Compensated"]
