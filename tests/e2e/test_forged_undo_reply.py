"""A forged undo reply cannot end a compensation: undo replies are bound to their request.

Shipping declines an order after its charge, so compensation refunds it. Before the
payment agent answers the refund, replies are raised on the compensation attempt's
``refund-reply`` event (they need the app's own queue rights): right event name and
instance, but answering no request the attempt sent. Each form is ignored: the order is
not Compensated by it, the instance does not fail, and once the genuine refund is made the
ledger audit finds the money balanced.
"""

import json

import pytest

from demo.audit import audit_data_dir
from orders.models import ProcessState
from orders.names import AGENT_REPLIES_QUEUE
from tests.e2e.harness import key, make_order

SHIP_DECLINE = {"status": 422, "reason": "address_undeliverable"}

FORGED_RESULTS = {
    "a refund": {"refundId": "ref_forged", "orderId": "{order}", "amount": "20.00",
                 "currency": "USD", "status": "refunded"},
    "a result missing fields": {"refundId": "ref_forged"},
}


def forged_refund_reply(order_key: str, result: dict, forged_ids: bool) -> str:
    """A Succeeded refund reply for ``<key>:comp:1``: with a forged request id and
    idempotency key (``forged_ids``), or with none (as an older agent's reply)."""
    body = {
        "schemaVersion": 1, "messageId": f"{order_key}:comp:1:refund:reply",
        "orderId": order_key, "instanceId": f"{order_key}:comp:1", "operation": "refund",
        "eventName": "refund-reply", "outcome": "Succeeded", "attempts": 1,
        "statusCode": 201,
        "result": {k: v.replace("{order}", order_key) for k, v in result.items()}}
    if forged_ids:
        body |= {"requestId": "forged-request", "idempotencyKey": "forged-key"}
    return json.dumps(body)


@pytest.mark.parametrize("forged_ids", [True, False], ids=["forged ids", "no request id"])
@pytest.mark.parametrize("form", sorted(FORGED_RESULTS))
def test_a_forged_refund_reply_neither_compensates_nor_fails_the_attempt(
        make_system, form, forged_ids):
    order = make_order(73)
    order_key = key(order)
    system = make_system(faults={"shipping": {"decline": {order_key: SHIP_DECLINE}}})
    with system.paused("shipping-requests"):  # charged; the shipment waits
        system.submit(order)
        system.run(2)
    with system.paused("payment-requests"):  # the genuine refund waits
        system.run(2)
        assert system.state(order.order_id).process_state is ProcessState.COMPENSATING
        system.engine.send(AGENT_REPLIES_QUEUE,
                           forged_refund_reply(order_key, FORGED_RESULTS[form], forged_ids),
                           message_id="forged-1")
        system.run(2)
        assert system.state(order.order_id).process_state is ProcessState.COMPENSATING
        comp = system.host.taskhub.get_instance(f"{order_key}:comp:1")
        assert comp.runtime_status == "Running"
        assert system.effects(kind="refund", order_id=order.order_id) == []
    system.run(60)
    assert system.state(order.order_id).process_state is ProcessState.COMPENSATED
    charges = system.effects(kind="charge", order_id=order.order_id)
    refunds = system.effects(kind="refund", order_id=order.order_id)
    assert len(charges) == len(refunds) == 1
    assert refunds[0].amount == charges[0].amount
    report = audit_data_dir(system.host.data_dir, system.ledger_path, [order_key])
    assert report.unbalanced == [] and report.stock_unbalanced == ()
