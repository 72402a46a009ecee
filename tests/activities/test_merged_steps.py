"""The activities of workflow versions 3 to 6: each merged part as the separate step did it,
in the same order, idempotent on rerun (X6, X7, S8, S9)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pydantic import ValidationError

from activities import steps
from orders.messaging import MessagingUnavailableError
from orders.models import Order, OrderLine, ProcessState
from tests.activities.test_step_contracts import REQUEST
from tests.support.records import record_in

PAID = {"paymentId": "pay_1", "orderId": "ORD-1", "amount": "20.00", "currency": "USD",
        "status": "captured"}
SHIPPED = {"shipmentId": "shp_1", "orderId": "ORD-1", "status": "created"}
FINISH = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "state": "Processed",
          "confirmed": {"step": "ship", "result": SHIPPED}, "workflowVersion": 3,
          "replyTo": "replies-acme"}
SHIP_REQUEST = {**REQUEST, "messageId": "ORD-1:1:ship", "service": "shipping",
                "operation": "ship", "idempotencyKey": "ORD-1:ship", "eventName": "ship-reply",
                "payload": {"orderId": "ORD-1", "lines": [{"sku": "SKU-A", "quantity": 2}]}}


def steps_logged(stores):
    return [(e.step.value, e.instance_id, e.workflow_version)
            for e in stores.compensation.entries("ORD-1")]


def test_begin_attempt_returns_the_order_when_asked(services, stores, clock):
    record_in(stores.states, clock)
    order = Order(order_key="ORD-1", customer_id="C-1", currency="USD", total_price=Decimal(20),
                  lines=[OrderLine(sku="SKU-A", quantity=2, unit_price=Decimal(10))],
                  created_at=datetime(2029, 12, 31, tzinfo=UTC))
    stores.orders.create_if_absent(order)
    data = {"orderId": "ORD-1", "instanceId": "ORD-1:1",
            "completeBy": "2030-01-01T00:00:30.000000Z", "loadOrder": True}
    got = steps.begin_attempt(data, services)
    assert (got["fenced"], got["replyTo"]) == (False, "replies-acme")
    assert Order.model_validate(got["order"]) == order
    assert stores.states.get("ORD-1").complete_by.isoformat() == "2030-01-01T00:00:30+00:00"
    # Fenced: no order read, none returned.
    assert steps.begin_attempt({**data, "instanceId": "ORD-1:0"}, services) == {
        "fenced": True, "replyTo": None}


def test_begin_attempt_fails_naming_a_missing_order(services, stores, clock):
    record_in(stores.states, clock)
    with pytest.raises(LookupError, match="no order ORD-1"):
        steps.begin_attempt({"orderId": "ORD-1", "instanceId": "ORD-1:1", "loadOrder": True,
                             "completeBy": "2030-01-01T00:00:30.000000Z"}, services)


def two_line_order(stores):
    order = Order(order_key="ORD-1", customer_id="C-1", currency="USD",
                  total_price=Decimal(50), created_at=datetime(2029, 12, 31, tzinfo=UTC),
                  lines=[OrderLine(sku="P1-S1", quantity=3, unit_price=Decimal(10)),
                         OrderLine(sku="P2-S2", quantity=5, unit_price=Decimal(4))])
    stores.orders.create_if_absent(order)
    return order


BEGIN_AND_RESERVE = {"orderId": "ORD-1", "instanceId": "ORD-1:1", "loadOrder": True,
                     "reserve": True, "completeBy": "2030-01-01T00:00:30.000000Z"}
RESERVED = {"reservationId": "RES-ORD-1", "lines": [{"sku": "P1-S1", "quantity": 3},
                                                     {"sku": "P2-S2", "quantity": 5}]}


def test_begin_attempt_reserves_the_lines_of_the_order_it_read_once_across_reruns(
        services, stores, clock):
    record_in(stores.states, clock, workflow_version=5)
    order = two_line_order(stores)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    first = steps.begin_attempt(BEGIN_AND_RESERVE, services)
    again = steps.begin_attempt(BEGIN_AND_RESERVE, services)  # a rerun (X7)
    assert first == again
    assert Order.model_validate(first["order"]) == order
    assert first["reservation"] == RESERVED
    assert [stores.inventory.get(sku).available for sku in ("P1-S1", "P2-S2")] == [7, 5]
    # The reserve entry is the separate activity's: logged once, by this attempt's version.
    assert steps_logged(stores) == [("reserve_inventory", "ORD-1:1", 5)]
    assert stores.states.get("ORD-1").complete_by.isoformat() == "2030-01-01T00:00:30+00:00"


def test_begin_attempt_reports_out_of_stock_as_reserve_inventory_does(services, stores,
                                                                      clock):
    record_in(stores.states, clock, workflow_version=5)
    two_line_order(stores)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 4})
    got = steps.begin_attempt(BEGIN_AND_RESERVE, services)
    assert got["reservation"]["outOfStock"] == {
        "sku": "P2-S2", "line": 1, "requested": 5, "available": 4}
    assert [stores.inventory.get(sku).available for sku in ("P1-S1", "P2-S2")] == [7, 4]
    assert steps_logged(stores) == [("reserve_inventory", "ORD-1:1", 5)]  # line 1 to release


def test_a_fenced_begin_attempt_reads_and_reserves_nothing(services, stores, clock):
    record_in(stores.states, clock, locked_by="ORD-1:2")  # a newer attempt owns it
    two_line_order(stores)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    assert steps.begin_attempt(BEGIN_AND_RESERVE, services) == {"fenced": True,
                                                                "replyTo": None}
    assert [stores.inventory.get(sku).available for sku in ("P1-S1", "P2-S2")] == [10, 10]
    assert stores.compensation.entries("ORD-1") == []


def test_reserve_without_load_order_is_refused_before_any_write(services, stores, clock):
    record_in(stores.states, clock)
    before = stores.states.get("ORD-1")
    with pytest.raises(ValidationError, match="reserve: needs loadOrder"):
        steps.begin_attempt({**BEGIN_AND_RESERVE, "loadOrder": None}, services)
    assert stores.states.get("ORD-1") == before


def test_send_logs_the_previous_step_then_its_own_request_then_sends(services, stores,
                                                                     clock, sender):
    record_in(stores.states, clock, workflow_version=3)
    data = {**SHIP_REQUEST, "workflowVersion": 3,
            "confirmed": {"step": "charge", "result": PAID}}
    assert steps.send_agent_request(data, services) == "ORD-1:1:ship"
    assert steps.send_agent_request(data, services) == "ORD-1:1:ship"  # a rerun
    assert steps_logged(stores) == [("charge", "ORD-1:1", 3), ("ship_requested", "ORD-1:1", 3)]
    charge = stores.compensation.entries("ORD-1")[0].details
    assert (charge.payment_id, charge.amount) == ("pay_1", Decimal("20.00"))
    # Both sends carry one MessageId: the queue drops the second (duplicate detection).
    assert [m.message_id for _, m in sender.sent] == ["ORD-1:1:ship"] * 2
    assert sender.bodies("shipping-requests")[0] == SHIP_REQUEST


def test_a_send_that_logs_a_step_needs_the_workflow_version(services, stores, clock, sender):
    record_in(stores.states, clock)
    with pytest.raises(ValueError, match="workflowVersion: required with confirmed"):
        steps.send_agent_request({**SHIP_REQUEST, "confirmed": {
            "step": "charge", "result": PAID}}, services)
    assert stores.compensation.entries("ORD-1") == [] and sender.sent == []


def test_finish_logs_the_last_step_sets_processed_then_tells_the_client(services, stores,
                                                                        clock, sender):
    record_in(stores.states, clock)
    assert steps.finish_attempt(FINISH, services) == {"fenced": False}
    assert steps_logged(stores) == [("ship", "ORD-1:1", 3)]
    record = stores.states.get("ORD-1")
    assert record.process_state is ProcessState.PROCESSED
    assert record.complete_by is None  # the status was sent and noted (S8)
    ((queue, message),) = sender.sent
    assert (queue, message.message_id) == ("replies-acme", "ORD-1:OrderCompleted:ORD-1:1")
    assert message.body["status"] == "OrderCompleted"
    # A rerun logs nothing new and sends the same MessageId (dropped by the queue).
    assert steps.finish_attempt(FINISH, services) == {"fenced": False}
    assert len(stores.compensation.entries("ORD-1")) == 1
    assert [m.message_id for _, m in sender.sent] == ["ORD-1:OrderCompleted:ORD-1:1"] * 2


def test_a_fenced_finish_logs_the_step_but_writes_and_publishes_nothing(services, stores,
                                                                        clock, sender):
    record_in(stores.states, clock, locked_by="ORD-1:2")  # a newer attempt owns it
    assert steps.finish_attempt(FINISH, services) == {"fenced": True}
    assert steps_logged(stores) == [("ship", "ORD-1:1", 3)]  # the shipment did happen
    assert stores.states.get("ORD-1").process_state is ProcessState.PROCESSING
    assert sender.sent == []


def test_a_failed_status_send_leaves_it_pending_for_the_supervisor(services, stores, clock,
                                                                   monkeypatch):
    record_in(stores.states, clock)

    def busy(queue, message):
        raise MessagingUnavailableError(f"{queue}: busy")

    monkeypatch.setattr(services.sender, "send", busy)
    assert steps.finish_attempt(FINISH, services) == {"fenced": False}
    record = stores.states.get("ORD-1")
    assert record.process_state is ProcessState.PROCESSED
    assert record.complete_by == clock.now() + services.settings.status_grace


def test_finish_refuses_an_entry_without_its_workflow_version(services, stores, clock):
    record_in(stores.states, clock)
    del_version = {k: v for k, v in FINISH.items() if k != "workflowVersion"}
    with pytest.raises(ValidationError, match="workflowVersion: required with confirmed"):
        steps.finish_attempt(del_version, services)
    assert stores.states.get("ORD-1").process_state is ProcessState.PROCESSING


def test_send_logs_both_entries_in_one_write_transaction(services, stores, clock, sender):
    record_in(stores.states, clock, workflow_version=3)
    log_writes = stores.compensation._db._group
    before = log_writes.transactions
    steps.send_agent_request({**SHIP_REQUEST, "workflowVersion": 3,
                              "confirmed": {"step": "charge", "result": PAID}}, services)
    assert log_writes.transactions == before + 1
    assert steps_logged(stores) == [("charge", "ORD-1:1", 3), ("ship_requested", "ORD-1:1", 3)]


def test_a_crash_between_the_two_entries_leaves_the_log_as_before_and_sends_nothing(
        services, stores, clock, sender, monkeypatch):
    import orders.stores.sqlite_compensation as sqlite_log
    from orders.compensation.plan import pending_undos

    record_in(stores.states, clock, workflow_version=3)
    steps.send_agent_request({**REQUEST, "workflowVersion": 3}, services)  # charge requested
    inserted = sqlite_log._insert

    def crash_on_ship(conn, entry, *args):
        if entry.step.value == "ship_requested":
            raise RuntimeError("the worker died here")
        return inserted(conn, entry, *args)

    monkeypatch.setattr(sqlite_log, "_insert", crash_on_ship)
    data = {**SHIP_REQUEST, "workflowVersion": 3, "confirmed": {"step": "charge", "result": PAID}}
    with pytest.raises(RuntimeError, match="died"):
        steps.send_agent_request(data, services)
    # Neither entry: compensation refunds the charge by its key, and ships nothing back.
    assert steps_logged(stores) == [("charge_requested", "ORD-1:1", 3)]
    assert [e.step.value for e in pending_undos(stores.compensation.entries("ORD-1"))] == [
        "charge_requested"]
    assert [m.message_id for _, m in sender.sent] == ["ORD-1:1:charge"]
    monkeypatch.setattr(sqlite_log, "_insert", inserted)
    steps.send_agent_request(data, services)  # the activity's retry
    assert steps_logged(stores)[1:] == [("charge", "ORD-1:1", 3), ("ship_requested", "ORD-1:1", 3)]
    assert [m.message_id for _, m in sender.sent] == ["ORD-1:1:charge", "ORD-1:1:ship"]


BEGIN_RESERVE_AND_SEND = {**BEGIN_AND_RESERVE, "sendFirst": {
    "service": "payment", "operation": "charge", "maxAttempts": 3}}
CHARGE_REQUEST = {
    "schemaVersion": 1, "messageId": "ORD-1:1:charge", "orderId": "ORD-1",
    "instanceId": "ORD-1:1", "service": "payment", "operation": "charge",
    "idempotencyKey": "ORD-1:charge", "completeBy": "2030-01-01T00:00:30.000000Z",
    "maxAttempts": 3, "eventName": "charge-reply", "replyTo": "agent-replies",
    "payload": {"orderId": "ORD-1", "amount": "50", "currency": "USD"}}


def test_begin_attempt_sends_the_first_request_after_the_reservation_across_reruns(
        services, stores, clock, sender):
    record_in(stores.states, clock, workflow_version=7)
    two_line_order(stores)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 10})
    first = steps.begin_attempt(BEGIN_RESERVE_AND_SEND, services)
    again = steps.begin_attempt(BEGIN_RESERVE_AND_SEND, services)  # a rerun (X7)
    assert first == again
    assert (first["reservation"], first["sent"]) == (RESERVED, "ORD-1:1:charge")
    # The log as versions 5's activities leave it: reserve, then the request, both once.
    assert steps_logged(stores) == [("reserve_inventory", "ORD-1:1", 7),
                                    ("charge_requested", "ORD-1:1", 7)]
    requested = stores.compensation.entries("ORD-1")[1].details
    assert (requested.idempotency_key, requested.amount) == ("ORD-1:charge", Decimal("50.00"))
    # The request send_agent_request would send; the rerun's copy is dropped by duplicate
    # detection (one MessageId).
    assert [queue for queue, _ in sender.sent] == ["payment-requests"] * 2
    assert sender.bodies("payment-requests") == [CHARGE_REQUEST] * 2
    assert [stores.inventory.get(sku).available for sku in ("P1-S1", "P2-S2")] == [7, 5]


def test_begin_attempt_sends_nothing_for_an_order_out_of_stock(services, stores, clock,
                                                               sender):
    record_in(stores.states, clock, workflow_version=7)
    two_line_order(stores)
    stores.inventory.load({"P1-S1": 10, "P2-S2": 4})
    got = steps.begin_attempt(BEGIN_RESERVE_AND_SEND, services)
    assert got["reservation"]["outOfStock"]["sku"] == "P2-S2" and "sent" not in got
    assert steps_logged(stores) == [("reserve_inventory", "ORD-1:1", 7)]
    assert sender.sent == []


def test_a_fenced_begin_attempt_sends_nothing(services, stores, clock, sender):
    record_in(stores.states, clock, locked_by="ORD-1:2")
    two_line_order(stores)
    assert steps.begin_attempt(BEGIN_RESERVE_AND_SEND, services) == {"fenced": True,
                                                                     "replyTo": None}
    assert stores.compensation.entries("ORD-1") == [] and sender.sent == []


@pytest.mark.parametrize("change, rule", [
    ({"reserve": None}, "sendFirst: needs reserve"),
    ({"sendFirst": {"service": "payment", "operation": "refund", "maxAttempts": 3}},
     "refund"),
    ({"sendFirst": {"service": "payment", "operation": "charge", "maxAttempts": 0}},
     "maxAttempts"),
    ({"sendFirst": {"service": "billing", "operation": "charge", "maxAttempts": 3}},
     "billing"),
    *[({"sendFirst": {"service": "payment", "operation": "charge", "maxAttempts": bad}},
       "maxAttempts") for bad in (True, "3", 3.0)],
])
def test_a_bad_first_request_is_refused_before_any_write(services, stores, clock, sender,
                                                         change, rule):
    record_in(stores.states, clock)
    two_line_order(stores)
    before = stores.states.get("ORD-1")
    with pytest.raises(ValueError, match=rule):
        steps.begin_attempt({**BEGIN_RESERVE_AND_SEND, **change}, services)
    assert stores.states.get("ORD-1") == before
    assert stores.compensation.entries("ORD-1") == [] and sender.sent == []
