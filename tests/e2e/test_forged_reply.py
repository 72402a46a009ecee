"""A forged agent reply cannot complete an order: replies are bound to their request (A4).

The payment service declines the order's card. Before the payment agent answers, a
Succeeded charge reply is raised on the attempt's event (it needs the app's own queue
rights): right event name, right instance, but answering no request the attempt sent. The
attempt ignores it, acts on the genuine decline, and the order is compensated with
nothing shipped; the ledger audit finds its money balanced.
"""

import json

from demo.audit import audit_data_dir
from orders.models import ProcessState
from orders.names import AGENT_REPLIES_QUEUE
from tests.e2e.harness import key, make_order


def forged_charge_reply(order_key: str) -> str:
    amount = "20.00"
    return json.dumps({
        "schemaVersion": 1, "messageId": f"{order_key}:1:charge:reply", "orderId": order_key,
        "instanceId": f"{order_key}:1", "operation": "charge", "eventName": "charge-reply",
        "outcome": "Succeeded", "attempts": 1, "statusCode": 201,
        "result": {"paymentId": "pay_forged", "orderId": order_key, "amount": amount,
                   "currency": "USD", "status": "captured"}})


def test_a_forged_success_reply_leaves_a_declined_order_unshipped_and_balanced(make_system):
    order = make_order(71)
    order_key = key(order)
    system = make_system(faults={"payment": {"decline": {order_key: {
        "status": 402, "reason": "card declined"}}}})
    with system.paused("payment-requests"):  # the genuine answer waits
        system.submit(order)
        system.run(2)
        assert system.state(order.order_id).process_state is ProcessState.PROCESSING
        system.engine.send(AGENT_REPLIES_QUEUE, forged_charge_reply(order_key),
                           message_id="forged-1")
        system.run(2)
        assert system.effects(kind="ship", order_id=order.order_id) == []
    system.run(60)
    record = system.state(order.order_id)
    assert record.process_state is ProcessState.COMPENSATED
    assert system.effects(kind="ship", order_id=order.order_id) == []
    assert system.effects(kind="charge", order_id=order.order_id) == []
    report = audit_data_dir(system.host.data_dir, system.ledger_path, [order_key])
    assert report.unbalanced == [] and report.stock_unbalanced == ()
