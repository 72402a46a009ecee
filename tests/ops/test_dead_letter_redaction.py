"""Dead-lettered bodies on the overview show only values of known unclassified fields (X10).

A dead-lettered body was written by whoever could send to the queue, so its field names
are not to be trusted: without the details role the overview (``ops.dashboard.overview.
queues``, over the local queues) shows a value only under a field the message contracts
declare and leave unclassified; every other value is withheld, and a body that is not a
JSON object or array is withheld whole. With details the body is shown as it came.
"""

import json

import pytest

from ops.dashboard.overview import queues
from orders.messaging import OutgoingMessage
from orders.messaging.settlement import DEAD_LETTERS_QUEUE, SOURCE_PROPERTY

SECRETS = ("CUST-SECRET-777", "123456.78")

BODIES = {
    "differently cased classified fields": (
        {"orderId": "ORD-1", "customerID": "CUST-SECRET-777", "TotalPrice": "123456.78"},
        {"orderId": "ORD-1", "customerID": "<withheld>", "TotalPrice": "<withheld>"}),
    "data in a key": ({"CUST-SECRET-777": "123456.78"}, {"CUST-SECRET-777": "<withheld>"}),
    "unknown fields nested in a known one": (
        {"order": {"orderId": "ORD-1", "customer": {"id": "CUST-SECRET-777"},
                   "price": 123456.78}},
        {"order": {"orderId": "ORD-1", "customer": {"id": "<withheld>"},
                   "price": "<withheld>"}}),
    "known classified fields": (
        {"order": {"customerId": "CUST-SECRET-777", "totalPrice": "123456.78"}},
        {"order": {"customerId": "<Confidential>", "totalPrice": "<Restricted>"}}),
    "known fields inside an unknown one": (
        {"wrapper": {"orderId": "ORD-1", "amount": "123456.78"}},
        {"wrapper": {"orderId": "ORD-1", "amount": "<Restricted>"}}),
    "JSON text in an unknown field": (
        {"note": json.dumps({"customerID": "CUST-SECRET-777"})},
        {"note": json.dumps({"customerID": "<withheld>"})}),
    "a top-level array": (["CUST-SECRET-777", 123456.78, {"reason": "late"}],
                          ["<withheld>", "<withheld>", {"reason": "late"}]),
    "a bare number": (123456.78, "<withheld: a JSON number, not an object or array; "
                                 "details=true shows it>"),
    # The queue browser reads a JSON string body as its text, which is then no JSON.
    "a bare string": ("CUST-SECRET-777", "<withheld: not JSON, 15 characters; "
                                         "details=true shows it>"),
}


@pytest.mark.parametrize("details", [False, True], ids=["without details", "with details"])
@pytest.mark.parametrize("name", BODIES)
def test_a_dead_lettered_body_shows_only_known_unclassified_values(
        local_queue_services, name, details):
    body, expected = BODIES[name]
    services = local_queue_services
    services.sender.send(DEAD_LETTERS_QUEUE, OutgoingMessage(
        body=json.dumps(body), message_id=f"dead-{len(name)}",
        application_properties={SOURCE_PROPERTY: "orders-shop-a"}))
    (row,) = [r for r in queues(services, details=details)["deadLettered"]
              if r["queue"] == DEAD_LETTERS_QUEUE]
    if details:
        assert row["body"] == body
        return
    assert row["body"] == expected
    shown = json.dumps(row["body"])
    assert not [s for s in SECRETS if s in shown.replace('"CUST-SECRET-777": ', "")]
