"""A client can act only as itself (S8, X10): the attacks of the shared-queue era fail.

Each client sends to its own queue ``orders-<clientId>``, the only one its identity may
send to; the service takes the client from the queue, never from the body, and scopes
OrderIDs per client (order key ``<clientId>~<OrderID>``). Client ``globex`` attacks client
``acme`` in each of the ways the shared ``orders`` queue allowed.
"""

import json

import pytest

from client.submit import message_id_for, submit_orders
from orders.messaging.local import LocalMessageSender
from orders.models.messages import SubmitOrder
from tests.e2e.harness import ProcessState, key, make_order


def body_of(order, client_id, reply_to=None) -> bytes:
    return json.dumps({"clientId": client_id, "replyTo": reply_to or f"replies-{client_id}",
                       "order": order.model_dump(mode="json")}).encode()


def statuses(system, client_id):
    return [(m["orderId"], m["status"]) for m in system.replies(client_id)]


def test_a_client_naming_another_client_in_its_body_is_dead_lettered_and_nothing_stored(
        make_system):
    system = make_system()
    order = make_order(1)
    # globex, on its own queue, poses as acme: acme's id and acme's reply queue.
    system.engine.send("orders-globex", body_of(order, "acme"), message_id="pose")
    # ... or keeps its own id but points the replies at acme's queue.
    system.engine.send("orders-globex", body_of(order, "globex", "replies-acme"),
                       message_id="redirect")
    system.run(10)
    dead = {m.message_id: m for m in system.engine.peek("orders-globex", 10, dead_letter=True)}
    assert {i: m.dead_letter_reason for i, m in dead.items()} == {
        "pose": "ClientMismatch", "redirect": "ClientMismatch"}
    assert dead["pose"].dead_letter_error_description.startswith(
        "clientId: 'acme' is not the client of queue 'orders-globex' ('globex'); replyTo: "
        "'replies-acme' is not the reply queue of client 'globex' ('replies-globex')")
    assert dead["redirect"].dead_letter_error_description.startswith(
        "replyTo: 'replies-acme' is not the reply queue of client 'globex'")
    for client_id in ("acme", "globex"):
        assert system.services.stores.states.get(key(order, client_id)) is None
        assert system.services.stores.orders.get(key(order, client_id)) is None
    # Each refusal is answered to the client the queue names, never the one the body names.
    assert system.replies("acme") == []
    assert [(r["orderId"], r["status"], r["reason"].split(":")[0])
            for r in system.replies("globex")] == [
        (order.order_id, "Rejected", "ClientMismatch")] * 2
    # One alert for globex's mismatches in this window, whatever it sends (collapsed).
    alerts = system.alerts()
    assert [(a["kind"], a["clientId"]) for a in alerts] == [("ClientMismatch", "globex")]
    assert "a message on 'orders-globex' was dead-lettered" in alerts[0]["reason"]
    assert system.effects() == []


def test_the_same_order_id_from_two_clients_is_two_orders(make_system):
    system = make_system()
    sender = LocalMessageSender(system.engine)
    acme_order, globex_order = make_order(7), make_order(7, lines=3)  # same OrderID
    submit_orders(sender, [acme_order], client_id="acme", reply_to="replies-acme")
    system.run(2)  # acme's order is stored first: globex's must not be taken as a conflict
    submit_orders(sender, [globex_order], client_id="globex", reply_to="replies-globex")
    system.run(15)
    for client_id, order in (("acme", acme_order), ("globex", globex_order)):
        record = system.state(order.order_id, client_id)
        assert (record.process_state, record.client_id, record.client_order_id, record.attempt
                ) == (ProcessState.PROCESSED, client_id, "ORD-00007", 1)
        assert record.locked_by == f"{client_id}~ORD-00007:1"
        charges = system.effects(kind="charge", order_id=order.order_id, client_id=client_id)
        assert [(c.order_key, c.idempotency_key, c.amount) for c in charges] == [
            (f"{client_id}~ORD-00007", f"{client_id}~ORD-00007:charge",
             str(order.total_price))]
        assert len(system.effects(kind="ship", order_id=order.order_id,
                                  client_id=client_id)) == 1
        # Each client hears of its own order only, by its own OrderID, on its own queue.
        assert statuses(system, client_id) == [("ORD-00007", "RequestReceived"),
                                               ("ORD-00007", "OrderCompleted")]
    assert acme_order.total_price != globex_order.total_price
    assert system.engine.counts("orders-acme").dead_letter == 0
    assert system.engine.counts("orders-globex").dead_letter == 0
    assert system.alerts() == []


def test_another_clients_message_id_does_not_drop_a_clients_order(make_system):
    system = make_system()
    sender = LocalMessageSender(system.engine)
    victim = make_order(9)
    # globex knows (or guesses) acme's order and sends first, under the very MessageId
    # acme's client will use, from the only queue it may send to.
    stolen_id = message_id_for(SubmitOrder(client_id="acme", reply_to="replies-acme",
                                           order=victim))
    decoy = make_order(9, lines=1)
    system.engine.send("orders-globex", body_of(decoy, "globex"), message_id=stolen_id)
    system.engine.send("orders-globex", body_of(decoy, "globex"), message_id=victim.order_id)
    system.run(2)
    assert submit_orders(sender, [victim], client_id="acme", reply_to="replies-acme") == 1
    assert system.engine.counts("orders-acme").active == 1  # not dropped as a duplicate
    system.run(15)
    assert system.state(victim.order_id, "acme").process_state == ProcessState.PROCESSED
    assert statuses(system, "acme") == [("ORD-00009", "RequestReceived"),
                                        ("ORD-00009", "OrderCompleted")]
    charges = system.effects(kind="charge", order_id=victim.order_id, client_id="acme")
    assert [c.amount for c in charges] == [str(victim.total_price)]
    # globex's own order (sent twice under two MessageIds) is one order of globex's.
    assert system.state(decoy.order_id, "globex").process_state == ProcessState.PROCESSED
    assert len(system.effects(kind="charge", order_id=decoy.order_id, client_id="globex")) == 1


def test_the_shared_orders_queue_accepts_no_order_and_loses_none(make_system):
    system = make_system()
    order = make_order(11)
    system.engine.send("orders", body_of(order, "acme"), message_id="old-client")
    system.engine.send("orders", b"{not json", message_id="garbage")
    system.run(5)
    dead = {m.message_id: m for m in system.engine.peek("orders", 10, dead_letter=True)}
    assert {i: m.dead_letter_reason for i, m in dead.items()} == {
        "old-client": "UseClientQueue", "garbage": "UseClientQueue"}
    assert "each client submits to its own queue 'orders-<clientId>'" in \
        dead["old-client"].dead_letter_error_description
    # Nothing in the body is offered as where to resend it: it proves nothing (X10).
    assert "the client that sent it must resend it to its own queue" in \
        dead["old-client"].dead_letter_error_description
    assert "acme" not in dead["old-client"].dead_letter_error_description
    assert json.loads(dead["old-client"].body) == json.loads(body_of(order, "acme"))
    assert system.services.stores.states.get(key(order)) is None
    assert system.services.stores.states.get(order.order_id) is None
    assert system.replies("acme") == []
    assert [a["kind"] for a in system.alerts()] == ["UseClientQueue"]  # collapsed


def raw_body(**fields) -> bytes:
    return json.dumps(fields).encode()


def victim_gets_its_own_statuses(system, order):
    """acme then submits the OrderID the attack named: its order is its own, end to end."""
    sender = LocalMessageSender(system.engine)
    assert submit_orders(sender, [order], client_id="acme", reply_to="replies-acme") == 1
    system.run(15)
    assert system.state(order.order_id, "acme").process_state == ProcessState.PROCESSED
    assert statuses(system, "acme") == [(order.order_id, "RequestReceived"),
                                        (order.order_id, "OrderCompleted")]


ATTACKS = {
    # The contract's Python names instead of its wire names, naming acme.
    "snake_case": lambda o: raw_body(client_id="acme", reply_to="replies-acme", order=o),
    # Both spellings, with values that disagree: one reader could take either.
    "mixed": lambda o: raw_body(clientId="globex", replyTo="replies-globex",
                                client_id="acme", reply_to="replies-acme", order=o),
    # The attacker's own id and queue, plus fields the contract does not have.
    "extra": lambda o: raw_body(clientId="globex", replyTo="replies-globex",
                                replyQueue="replies-acme", statusQueue="replies-acme",
                                order=o),
    # An unknown field inside the order.
    "nested_extra": lambda o: raw_body(clientId="globex", replyTo="replies-globex",
                                       order={**o, "reply_to": "replies-acme"}),
    # Another client's queue in other case: the same Service Bus entity.
    "case_upper": lambda o: raw_body(clientId="globex", replyTo="REPLIES-ACME", order=o),
    "case_mixed": lambda o: raw_body(clientId="globex", replyTo="Replies-Acme", order=o),
    # Another client's id in other case.
    "client_case": lambda o: raw_body(clientId="ACME", replyTo="replies-acme", order=o),
}
"""Bodies globex sends on its own queue, each trying to get acme's statuses."""


@pytest.mark.parametrize("form", sorted(ATTACKS))
def test_no_spelling_of_a_body_reaches_another_clients_queue(make_system, form):
    system = make_system()
    order = make_order(21)
    system.engine.send("orders-globex", ATTACKS[form](order.model_dump(mode="json")),
                       message_id=f"attack-{form}")
    system.run(10)
    dead = system.engine.peek("orders-globex", 10, dead_letter=True)
    assert [(m.message_id, m.dead_letter_reason) for m in dead] == [
        (f"attack-{form}", REASONS[form])]
    assert system.services.stores.states.get(key(order, "globex")) is None
    # The refusal is answered to globex, whose queue it came on; acme hears nothing of it.
    refused = [(r["status"], r["reason"].split(":")[0]) for r in system.replies("globex")]
    assert system.replies("acme") == [] and refused == [("Rejected", REASONS[form])]
    victim_gets_its_own_statuses(system, order)
    assert len(system.replies("globex")) == 1


REASONS = {"snake_case": "SchemaViolation", "mixed": "SchemaViolation",
           "extra": "SchemaViolation", "nested_extra": "SchemaViolation",
           "case_upper": "ClientMismatch", "case_mixed": "ClientMismatch",
           "client_case": "SchemaViolation"}


def test_an_unknown_field_is_named_in_the_dead_letter_reason(make_system):
    system = make_system()
    order = make_order(22).model_dump(mode="json")
    system.engine.send("orders-globex", ATTACKS["snake_case"](order), message_id="snake")
    system.run(5)
    [dead] = system.engine.peek("orders-globex", 10, dead_letter=True)
    assert dead.dead_letter_error_description.startswith(
        "body: unknown field(s) 'client_id', 'reply_to': the contract accepts only clientId, "
        "order, replyTo, schemaVersion")


def test_a_clients_own_queue_in_other_case_is_its_own_and_replies_go_to_the_queues_client(
        make_system):
    system = make_system()
    order = make_order(23)
    system.engine.send("orders-globex", raw_body(
        clientId="globex", replyTo="REPLIES-GLOBEX", order=order.model_dump(mode="json")),
        message_id="own")
    system.run(15)
    record = system.state(order.order_id, "globex")
    assert (record.process_state, record.reply_to) == (ProcessState.PROCESSED,
                                                       "replies-globex")
    assert statuses(system, "globex") == [(order.order_id, "RequestReceived"),
                                          (order.order_id, "OrderCompleted")]


def test_a_record_stored_with_another_clients_reply_queue_reports_to_its_own_client(
        make_system):
    """A record written before replyTo came from the queue may hold a body's choice."""
    system = make_system()
    order = make_order(24)
    sender = LocalMessageSender(system.engine)
    submit_orders(sender, [order], client_id="globex", reply_to="replies-globex")
    system.run(1)
    states = system.services.stores.states
    record = states.get(key(order, "globex"))
    states.replace(record.model_copy(update={"reply_to": "replies-acme"}))
    system.run(15)
    assert system.state(order.order_id, "globex").process_state == ProcessState.PROCESSED
    assert system.replies("acme") == []
    assert (order.order_id, "OrderCompleted") in statuses(system, "globex")


def test_a_flood_of_mismatches_raises_one_alert_and_a_later_real_alert_shows(make_system):
    system = make_system()
    for n in range(40):
        system.engine.send("orders-globex", body_of(make_order(100 + n), "acme"),
                           message_id=f"flood-{n}")
    system.run(10)
    assert system.engine.counts("orders-globex").dead_letter == 40  # none lost
    assert [a["kind"] for a in system.alerts()] == ["ClientMismatch"]
