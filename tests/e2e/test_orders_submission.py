"""Submission faults: duplicates, conflicting data, malformed and invalid messages (S1)."""

import json

from orders.models import Order
from tests.e2e.harness import ProcessState, key, make_order

QUEUE = "orders-acme"
"""Client acme's own submit queue (the harness's default client)."""


def stored(order, client_id="acme"):
    """``order`` as the order database holds it: under its key ``<clientId>~<OrderID>``."""
    return Order.of_client(order, key(order, client_id))


def test_same_message_twice_gives_one_record_and_one_workflow(make_system):
    system = make_system()
    order = make_order(7)
    system.submit(order, message_id="first")
    system.submit(order, message_id="second")  # a resend the client gave a new MessageId
    system.run(10)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.PROCESSED and record.attempt == 1
    assert system.host.taskhub.get_instance(f"{order.order_id}:2") is None
    assert len(system.effects(kind="charge", order_id=order.order_id)) == 1
    assert system.engine.counts(QUEUE).dead_letter == 0


def test_other_data_under_same_order_id_is_dead_lettered_and_alerted(make_system):
    system = make_system()
    original = make_order(8)
    system.submit(original)
    system.run(10)
    changed = original.model_copy(update={"customer_id": "CUST-EVIL"})
    system.submit(changed, message_id="conflicting")
    system.run(5)
    dead = system.engine.peek(QUEUE, 10, dead_letter=True)
    assert [m.message_id for m in dead] == ["conflicting"]
    assert dead[0].dead_letter_reason == "ConflictingOrder"
    assert system.services.stores.orders.get(key(original)) == stored(original)
    alerts = system.alerts()
    assert [(a["kind"], a["orderId"]) for a in alerts] == [("ConflictingOrder", key(original))]


def test_malformed_json_and_schema_violation_are_dead_lettered_with_reason(make_system):
    system = make_system()
    system.engine.send(QUEUE, b"{not json", message_id="bad-json")
    bad = json.loads(make_order(9).model_dump_json(by_alias=True))
    bad["lines"][0]["quantity"] = -3
    body = json.dumps({"clientId": "acme", "replyTo": "replies-acme", "order": bad})
    system.engine.send(QUEUE, body, message_id="bad-schema")
    system.run(5)
    dead = {m.message_id: m for m in system.engine.peek(QUEUE, 10, dead_letter=True)}
    assert dead["bad-json"].dead_letter_reason == "InvalidJson"
    assert dead["bad-schema"].dead_letter_reason == "SchemaViolation"
    assert "order.lines.0.quantity" in dead["bad-schema"].dead_letter_error_description
    assert system.services.stores.states.get(key("ORD-00009")) is None


def test_reply_to_another_clients_queue_is_refused_and_nothing_is_sent(make_system):
    system = make_system()
    order = make_order(31)
    body = json.dumps({"clientId": "acme", "replyTo": "replies-globex",
                       "order": json.loads(order.model_dump_json(by_alias=True))})
    system.engine.send(QUEUE, body, message_id="hijack")
    for queue in ("operator-alerts", "payment-requests"):
        body = json.dumps({"clientId": "acme", "replyTo": queue,
                           "order": json.loads(order.model_dump_json(by_alias=True))})
        system.engine.send(QUEUE, body, message_id=f"hijack-{queue}")
    system.run(5)
    dead = {m.message_id: m for m in system.engine.peek(QUEUE, 10, dead_letter=True)}
    assert set(dead) == {"hijack", "hijack-operator-alerts", "hijack-payment-requests"}
    assert {m.dead_letter_reason for m in dead.values()} == {"ClientMismatch"}
    assert dead["hijack"].dead_letter_error_description.startswith(
        "replyTo: 'replies-globex' is not the reply queue of client 'acme' ('replies-acme')")
    # Each refusal is answered on the queue's client's reply queue only (X10).
    assert system.replies("globex") == []
    assert [(r["status"], r["reason"].split(":")[0]) for r in system.replies("acme")] == [
        ("Rejected", "ClientMismatch")] * 3
    # Collapsed: one alert per client, kind and window (issue: alerts that cannot be buried).
    assert [a["kind"] for a in system.alerts()] == ["ClientMismatch"]
    assert system.services.stores.states.get(key(order)) is None


def test_missing_reply_queue_dead_letters_naming_reply_to_and_starts_nothing(make_system):
    from orders.messaging import QueueNotFoundError
    from scheduler.submission import Rejected, submit

    system = make_system(settings={"ORDER_CLIENTS": "acme,gone"})
    order = make_order(32)
    body = json.dumps({"clientId": "gone", "replyTo": "replies-gone",
                       "order": json.loads(order.model_dump_json(by_alias=True))}).encode()

    class NoReplyQueue:
        def send(self, queue, message):
            raise QueueNotFoundError(queue, "no such entity")

    svc = system.services
    result = submit(body, svc.stores, NoReplyQueue(), system.clock.now(), client_id="gone")
    assert isinstance(result, Rejected) and result.reason == "UnknownReplyQueue"
    assert "the reply queue 'replies-gone' of client gone does not exist" in \
        result.description
    assert svc.stores.states.get(key(order, "gone")) is None
    # The client fixes its queue and sends again: accepted, processed once.
    system.submit(order, client_id="gone")
    system.run(10)
    assert system.state(order.order_id, "gone").process_state == ProcessState.PROCESSED


def test_client_resend_is_dropped_but_a_changed_order_is_refused_as_conflict(make_system):
    from client.submit import submit_orders
    from orders.messaging.local import LocalMessageSender

    system = make_system()
    sender = LocalMessageSender(system.engine)
    original = make_order(40)
    submit_orders(sender, [original], client_id="acme", reply_to="replies-acme")
    system.run(10)
    assert system.state(original.order_id).process_state == ProcessState.PROCESSED
    assert system.engine.counts(QUEUE).active == 0
    # Within the 10-minute duplicate detection window: the same order is dropped by the
    # queue, before any function sees it.
    submit_orders(sender, [original], client_id="acme", reply_to="replies-acme")
    assert system.engine.counts(QUEUE).active == 0
    # The same OrderID with other data is not: submission refuses it as a conflict.
    changed = make_order(40, lines=3)
    submit_orders(sender, [changed], client_id="acme", reply_to="replies-acme")
    assert system.engine.counts(QUEUE).active == 1
    system.run(5)
    dead = system.engine.peek(QUEUE, 10, dead_letter=True)
    assert [(m.correlation_id, m.delivery_count, m.dead_letter_reason) for m in dead] == \
        [(original.order_id, 1, "ConflictingOrder")]
    assert "a different order is already stored under this key" in \
        dead[0].dead_letter_error_description
    assert system.services.stores.orders.get(key(original)) == stored(original)
    assert [(a["kind"], a["orderId"]) for a in system.alerts()] == [("ConflictingOrder",
                                                                    key(original))]
    assert len(system.effects(kind="charge", order_id=original.order_id)) == 1
    # The client is answered on its own reply queue: this message was refused, and why.
    answers = [(m["status"], m.get("reason") or "") for m in system.replies()]
    assert [a[0] for a in answers] == ["RequestReceived", "OrderCompleted", "ChangeRefused"]
    assert answers[-1][1].startswith(f"ConflictingOrder: OrderID {original.order_id}")
