"""The holder check covers what the service acts on, not only the envelope's order.

The services act on the payload's ``orderId`` and deduplicate by the idempotency key, and the
orchestration waits on ``eventName``: a request naming the attempt that holds its order but
another order in its payload, a fresh key (a second charge) or another operation's reply event
is refused at parse (S4, A1, A2, A4).
"""

import json
from datetime import UTC, datetime, timedelta

import pytest

from agents.handler import SERVICE_MISMATCH, parse_request
from orders.models import wire


def body(**changes):
    message = {"messageId": "ORD-A:1:charge", "orderId": "ORD-A", "instanceId": "ORD-A:1",
               "service": "payment", "operation": "charge", "idempotencyKey": "ORD-A:charge",
               "completeBy": (datetime.now(UTC) + timedelta(seconds=30)).isoformat(),
               "maxAttempts": 3, "eventName": "charge-reply", "replyTo": "agent-replies",
               "payload": {"orderId": "ORD-A", "amount": "12.50", "currency": "USD"}}
    message.update(changes)
    return json.dumps(message).encode()


def test_the_orchestrations_own_request_parses():
    assert parse_request(body(), "payment-requests").payload["orderId"] == "ORD-A"


@pytest.mark.parametrize(("changes", "problem"), [
    ({"payload": {"orderId": "ORD-B", "amount": "999", "currency": "USD"}},
     "payload.orderId: 'ORD-B' is not the request's orderId 'ORD-A'"),
    ({"payload": {"amount": "999", "currency": "USD"}},
     "payload.orderId: None is not the request's orderId 'ORD-A'"),
    ({"idempotencyKey": "ORD-A:charge:again"},
     "idempotencyKey: 'ORD-A:charge:again' is not the key of charge for the order "
     "('ORD-A:charge'"),
    ({"eventName": "ship-reply"},
     "eventName: 'ship-reply' is not the reply event of charge ('charge-reply')"),
])
def test_a_request_whose_payload_or_event_is_not_its_orders_is_dead_lettered(changes, problem):
    with pytest.raises(wire.InvalidMessage) as caught:
        parse_request(body(**changes), "payment-requests")
    assert caught.value.reason == SERVICE_MISMATCH
    assert problem in str(caught.value)


def refund(charge_key):
    payload = {"orderId": "ORD-A", "chargeKey": charge_key}
    return body(messageId="ORD-A:comp:1:refund", instanceId="ORD-A:comp:1", operation="refund",
                idempotencyKey="ORD-A:refund", eventName="refund-reply",
                payload={k: v for k, v in payload.items() if v is not None})


@pytest.mark.parametrize("charge_key", ["ORD-A:charge", None])
def test_an_undo_naming_its_own_orders_forward_request_or_none_parses(charge_key):
    assert parse_request(refund(charge_key), "payment-requests").payload.get(
        "chargeKey") == charge_key


def test_an_undo_naming_another_orders_forward_request_is_dead_lettered():
    # The service would void ORD-B's unused charge key under ORD-A's refund key (A2).
    with pytest.raises(wire.InvalidMessage) as caught:
        parse_request(refund("ORD-B:charge"), "payment-requests")
    assert caught.value.reason == SERVICE_MISMATCH
    assert ("payload.chargeKey: 'ORD-B:charge' is not the key of the order's charge "
            "('ORD-A:charge')") in str(caught.value)
