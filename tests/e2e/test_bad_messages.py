"""Every bad message on a queue the app consumes is dead-lettered with its reason on its
first delivery, never retried into MaxDeliveryCountExceeded (S1, A1, A4, L3).

One system serves the whole module: each test sends its own message (own MessageId) through
the local Service Bus, lets the real trigger take it, and reads the dead-letter queue.
"""

import hashlib
import json
from datetime import timedelta

import pytest

from clocks import ManualClock
from orders.models.messages import SubmitOrder
from tests.e2e.harness import System, key, make_order

ORDER = json.loads(SubmitOrder(client_id="acme", reply_to="replies-acme",
                               order=make_order(900)).model_dump_json(by_alias=True))
ORDER_KEY = key(ORDER["order"]["orderId"])
SUBMIT_QUEUE = "orders-acme"


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        s = System(tmp_path_factory.mktemp("bad-messages"), ManualClock(), mp)
        try:
            yield s
        finally:
            s.close()


def deliver(system, queue: str, body: bytes, message_id: str):
    """Send ``body`` to ``queue``, run the app, return the message's dead-letter copy."""
    system.engine.send(queue, body, message_id=message_id)
    system.run(2)
    dead = [m for m in system.engine.peek(queue, 1000, dead_letter=True)
            if m.message_id == message_id]
    assert len(dead) == 1, f"{message_id} was not dead-lettered"
    assert system.engine.counts(queue).active == 0
    return dead[0]


def dead_lettered_once(system, queue: str, case: tuple, message_id: str):
    """Deliver a ``(body, reason, text)`` case; it is dead-lettered once with its reason."""
    body, reason, text = case
    dead = deliver(system, queue, body, message_id)
    assert dead.delivery_count == 1
    assert dead.dead_letter_reason == reason
    assert text in dead.dead_letter_error_description


def changed(path: str, text: str) -> bytes:
    """The valid order message with the JSON value at ``path`` replaced by raw ``text``."""
    marker = "\u2063MARK\u2063"
    data = json.loads(json.dumps(ORDER))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = data
    for p in parents:
        node = node[p]
    node[last] = marker
    return json.dumps(data, ensure_ascii=False).replace(json.dumps(marker, ensure_ascii=False),
                                                        text).encode("utf-8")


def submission_of(lines: list[tuple[int, str, str]], total: str, currency: str = "USD") -> bytes:
    """The valid order message with other ``(quantity, unitPrice, discount)`` lines and total."""
    data = json.loads(json.dumps(ORDER))
    data["order"].update(currency=currency, totalPrice=total, lines=[
        {"sku": f"SKU-{i}", "quantity": q, "unitPrice": p, "discount": d}
        for i, (q, p, d) in enumerate(lines)])
    return json.dumps(data).encode()


SUBMISSIONS = {
    # name: (body, reason, text in the description)
    "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, "InvalidJson", "body: nested deeper"),
    "deep-nesting-in-a-field": (changed("order.customerId", "[" * 40 + "]" * 40),
                                "InvalidJson", "nested deeper than 32"),
    "huge-integer": (changed("order.lines.0.quantity", "9" * 100_000), "InvalidJson",
                     "order.lines.0.quantity: integer of 100000 digits"),
    "integer-past-64-bits": (changed("order.lines.0.quantity", str(2**64)), "InvalidJson",
                             "order.lines.0.quantity: integer of 20 digits"),
    "float-overflow": (changed("order.totalPrice", "1e999"), "InvalidJson",
                       "order.totalPrice: number overflows a double"),
    "nan-literal": (changed("order.lines.0.unitPrice", "NaN"), "InvalidJson",
                    "order.lines.0.unitPrice: NaN is not a JSON number"),
    "infinity-literal": (changed("order.totalPrice", "-Infinity"), "InvalidJson",
                         "order.totalPrice: -Infinity is not a JSON number"),
    "invalid-utf8": (changed("order.customerId", '"CUST-\u00e9"').replace(b"\xc3\xa9", b"\xff"),
                     "InvalidJson", "not UTF-8: invalid start byte (byte 0xff"),
    "utf16-body": (json.dumps(ORDER).encode("utf-16"), "InvalidJson", "not UTF-8"),
    "unpaired-surrogate": (changed("order.customerId", '"CUST-\\ud800"'), "InvalidJson",
                           "order.customerId: contains an unpaired surrogate \\ud800"),
    "duplicate-names": (changed("order.totalPrice", '"20.00", "totalPrice": "2000.00"'),
                        "InvalidJson", "order: duplicate name 'totalPrice'"),
    "syntax-error": (b'{"clientId": "acme",', "InvalidJson", "body: not valid JSON"),
    "empty-body": (b"", "InvalidJson", "body: not valid JSON: Expecting value"),
    "top-level-array": (b"[1, 2]", "SchemaViolation", "body: Input should be a valid dict"),
    "top-level-string": (b'"order"', "SchemaViolation", "body: Input should be a valid dict"),
    "wrong-type": (changed("order.lines.0.quantity", '"1"'), "SchemaViolation",
                   "order.lines.0.quantity: Input should be a valid integer"),
    "lines-not-a-list": (changed("order.lines", '{"sku": "A"}'), "SchemaViolation",
                         "order.lines: Input should be a valid"),
    "amount-beyond-decimal-range": (changed("order.lines.0.unitPrice", '"1E+1000000"'),
                                    "SchemaViolation",
                                    "totalPrice: cannot be checked against the lines"),
    "amount-of-100000-digits": (changed("order.lines.0.unitPrice", '"' + "1" * 100_000 + '"'),
                                "SchemaViolation", "totalPrice: does not match the lines: it "
                                "differs from sum(quantity * unitPrice * (1 + tax) * (1 - "
                                "discount)) by more than the allowed difference"),
    "total-finer-than-the-minor-unit": (changed("order.totalPrice", '"30.001"'),
                                        "SchemaViolation", "order.totalPrice: at most 2 "
                                        "decimal places, the ISO 4217 minor unit of the "
                                        "order's currency; got 3"),
    "yen-with-sen": (submission_of([(3, "10.5", "0")], "31.5", "JPY"), "SchemaViolation",
                     "order.totalPrice: at most 0 decimal places, the ISO 4217 minor unit"),
    "total-above-the-maximum": (submission_of([(2, "600000", "0")], "1200000"),
                                "SchemaViolation", "order.totalPrice: must be at most "
                                "MAX_ORDER_AMOUNT=1000000"),
    # A line given away (discount 1) adds nothing to the total, whatever its unit price.
    "unit-price-above-the-maximum": (submission_of([(1, "5", "0"), (1, "2000000", "1")], "5",
                                                   "EUR"),
                                     "SchemaViolation", "order.lines[1].unitPrice: must be at "
                                     "most MAX_ORDER_AMOUNT=1000000"),
    "time-outside-utc-range": (changed("order.createdAt", '"0001-01-01T00:00:00+14:00"'),
                               "SchemaViolation",
                               "order.createdAt: Value error, must lie between years 1"),
    "unknown-field": (changed("order.customerId", '"CUST-1", "coupon": "FREE"'),
                      "SchemaViolation", "order: unknown field(s) 'coupon'"),
    "bad-schema-version": (changed("schemaVersion", "2"), "SchemaViolation", "schemaVersion"),
    "total-not-matching-lines": (changed("order.totalPrice", '"1.00"'), "SchemaViolation",
                                 "totalPrice"),
    "bom-and-trailing-comma": (b"\xef\xbb\xbf" + json.dumps(ORDER).encode()[:-1] + b", }",
                               "InvalidJson", "body: not valid JSON"),
    "another-clients-id": (changed("clientId", '"globex"'), "ClientMismatch",
                           "clientId: 'globex' is not the client of queue 'orders-acme'"),
}
BODY_WITHOUT_ORDER_ID = {"deep-nesting", "invalid-utf8", "utf16-body", "syntax-error",
                         "empty-body", "top-level-array", "top-level-string",
                         "bom-and-trailing-comma", "deep-nesting-in-a-field", "huge-integer",
                         "integer-past-64-bits", "float-overflow", "nan-literal",
                         "infinity-literal", "unpaired-surrogate", "duplicate-names"}
"""Forms whose OrderID cannot be read: not strict JSON, or no ``order`` object."""


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_bad_submission_is_dead_lettered_with_reason_on_first_delivery(system, name):
    dead_lettered_once(system, SUBMIT_QUEUE, SUBMISSIONS[name], f"submit-{name}")
    assert system.services.stores.orders.get(ORDER_KEY) is None
    assert system.services.stores.states.get(ORDER_KEY) is None


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_bad_submission_is_answered_rejected_on_its_queues_clients_reply_queue(system, name):
    """The queue names the client, never the body (X10): every refusal reaches it (S8)."""
    body, reason, _ = SUBMISSIONS[name]
    message_id = f"answered-{name}"
    deliver(system, SUBMIT_QUEUE, body, message_id)
    digest = hashlib.sha256(message_id.encode()).hexdigest()[:16]
    (answer,) = [json.loads(m.body) for m in system.engine.peek("replies-acme", 100_000)
                 if m.message_id.endswith(f":Rejected:refused:{digest}")]
    assert answer["status"] == "Rejected"
    assert answer["reason"].startswith(f"{reason}: ")
    assert answer["reason"].endswith("nothing was stored")
    assert answer["reason"].count("nothing was stored") == 1
    assert answer["orderId"] == (None if name in BODY_WITHOUT_ORDER_ID
                                 else ORDER["order"]["orderId"])
    assert not [r for r in system.replies("globex") if r["status"] == "Rejected"]


def test_the_valid_message_the_forms_derive_from_is_accepted(system):
    body = changed("order.orderId", '"ORD-00901"')
    system.engine.send(SUBMIT_QUEUE, body, message_id="submit-valid")
    system.run(2)
    assert system.services.stores.states.get(key("ORD-00901")) is not None
    assert "submit-valid" not in {m.message_id for m in
                                  system.engine.peek(SUBMIT_QUEUE, 1000, dead_letter=True)}


def agent_request(**changes) -> dict:
    request = {"schemaVersion": 1, "messageId": "ORD-00950:1:charge", "orderId": "ORD-00950",
               "instanceId": "ORD-00950:1", "service": "payment", "operation": "charge",
               "idempotencyKey": "ORD-00950:charge",
               "completeBy": "2030-01-01T00:05:00.000000Z", "maxAttempts": 2,
               "eventName": "charge-reply",
               "payload": {"orderId": "ORD-00950", "amount": "10.00", "currency": "USD"}}
    return {**request, **changes}


def raw(data: dict, key: str, text: str) -> bytes:
    """``data`` as JSON with the value of top-level ``key`` replaced by raw ``text``."""
    return json.dumps({**data, key: "\u2063"}).replace('"\\u2063"', text).encode()


AGENT_REQUESTS = {
    "deep-nesting": (b"{" + b'"a":{' * 20_000 + b"}" * 20_001, "InvalidJson",
                     "agent request: body: nested deeper"),
    "nan-in-payload": (raw(agent_request(), "payload", '{"amount": NaN}'), "InvalidJson",
                       "agent request: payload.amount: NaN is not a JSON number"),
    "surrogate-in-payload": (raw(agent_request(), "payload", '{"note": "\\udfff"}'),
                             "InvalidJson", "agent request: payload.note: contains an "
                                            "unpaired surrogate"),
    "huge-integer": (raw(agent_request(), "maxAttempts", "1" * 5000), "InvalidJson",
                     "agent request: maxAttempts: integer of 5000 digits"),
    "duplicate-names": (raw(agent_request(), "maxAttempts", '2, "maxAttempts": 1'),
                        "InvalidJson", "agent request: body: duplicate name 'maxAttempts'"),
    "invalid-utf8": (b'{"orderId": "\xc3\x28"}', "InvalidJson", "agent request: body: not "
                                                                 "UTF-8"),
    "wrong-type": (json.dumps(agent_request(maxAttempts="two")).encode(), "SchemaViolation",
                   "agent request: maxAttempts: Input should be a valid integer"),
    "time-outside-utc-range": (json.dumps(agent_request(
        completeBy="9999-12-31T23:59:59-05:00")).encode(), "SchemaViolation",
        "agent request: completeBy: Value error, must lie between years 1 and 9999"),
    "top-level-array": (b"[]", "SchemaViolation", "agent request: body: Input should be"),
    # The queue decides the service, its operations and the reply queue (A1, A4).
    "other-service": (json.dumps(agent_request(service="shipping", operation="ship")).encode(),
                      "ServiceMismatch", "agent request: service: 'shipping' is not the "
                                         "service of queue 'payment-requests' ('payment')"),
    "other-services-operation": (json.dumps(agent_request(operation="ship")).encode(),
                                 "ServiceMismatch", "agent request: operation: 'ship' is "
                                                    "not an operation of the payment service"),
    "foreign-reply-queue": (json.dumps(agent_request(replyTo="replies-acme")).encode(),
                            "ServiceMismatch", "agent request: replyTo: 'replies-acme' is not "
                                               "the agents' reply queue 'agent-replies'"),
    "snake-case-field": (json.dumps({**agent_request(), "reply_to": "replies-acme"}).encode(),
                         "SchemaViolation", "agent request: body: unknown field(s) "
                                            "'reply_to'"),
}


@pytest.mark.parametrize("name", AGENT_REQUESTS)
def test_bad_agent_request_is_dead_lettered_with_reason_on_first_delivery(system, name):
    dead_lettered_once(system, "payment-requests", AGENT_REQUESTS[name], f"request-{name}")
    assert system.ledger.side_effects(order_key="ORD-00950") == []  # a legacy key


def test_agent_request_naming_another_reply_queue_calls_nothing(system):
    complete_by = system.clock.now() + timedelta(minutes=5)
    request = agent_request(orderId="ORD-00951", instanceId="ORD-00951:1",
                            messageId="ORD-00951:1:charge", idempotencyKey="ORD-00951:charge",
                            replyTo="no-such-queue",
                            completeBy=complete_by.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                            payload={"orderId": "ORD-00951", "amount": "10.00",
                                     "currency": "USD"})
    dead = deliver(system, "payment-requests", json.dumps(request).encode(), "request-noqueue")
    assert (dead.delivery_count, dead.dead_letter_reason) == (1, "ServiceMismatch")
    assert "replyTo: 'no-such-queue' is not the agents' reply queue" in \
        dead.dead_letter_error_description
    assert system.ledger.side_effects(kind="charge", order_key="ORD-00951") == []


def agent_reply(**changes) -> dict:
    reply = {"schemaVersion": 1, "messageId": "ORD-00960:1:charge:reply",
             "orderId": "ORD-00960", "instanceId": "ORD-00960:1", "operation": "charge",
             "eventName": "charge-reply", "outcome": "Succeeded", "attempts": 1,
             "statusCode": 201, "result": {"paymentId": "P-1"}}
    return {**reply, **changes}


AGENT_REPLIES = {
    "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, "InvalidJson",
                     "agent reply: body: nested deeper"),
    "deep-result": (raw(agent_reply(), "result", '{"a":' * 40 + "1" + "}" * 40),
                    "InvalidJson", "nested deeper than 32"),
    "infinity-in-result": (raw(agent_reply(), "result", '{"fee": 1e400}'), "InvalidJson",
                           "agent reply: result.fee: number overflows a double"),
    "nan-in-result": (raw(agent_reply(), "result", '{"fee": NaN}'), "InvalidJson",
                      "agent reply: result.fee: NaN is not a JSON number"),
    "surrogate-in-reason": (raw(agent_reply(), "reason", '"\\udc80"'), "InvalidJson",
                            "agent reply: reason: contains an unpaired surrogate"),
    "huge-status-code": (raw(agent_reply(), "statusCode", "2" * 30), "InvalidJson",
                         "agent reply: statusCode: integer of 30 digits"),
    "invalid-utf8": (b'{"reason": "\xfe"}', "InvalidJson", "agent reply: body: not UTF-8"),
    "wrong-type": (json.dumps(agent_reply(outcome="Done")).encode(), "SchemaViolation",
                   "agent reply: outcome: Input should be"),
    "top-level-null": (b"null", "SchemaViolation", "agent reply: body: Input should be"),
}


@pytest.mark.parametrize("name", AGENT_REPLIES)
def test_bad_agent_reply_is_dead_lettered_with_reason_on_first_delivery(system, name):
    dead_lettered_once(system, "agent-replies", AGENT_REPLIES[name], f"reply-{name}")


SECRET = "CUST-SECRET-77"


def with_secret(**order_fields: str) -> dict:
    data = json.loads(json.dumps(ORDER))
    data["order"].update({"customerId": SECRET, **order_fields})
    return data


REFUSED_WITH_SECRETS = {
    # name: (body, secrets it holds in classified fields)
    "bom-and-trailing-comma": (b"\xef\xbb\xbf" + json.dumps(with_secret()).encode()[:-1]
                               + b", }", [SECRET]),
    "trailing-comma": (json.dumps(with_secret()).encode()[:-1] + b", }", [SECRET]),
    "control-character-in-customer-id": (
        json.dumps(with_secret(customerId=SECRET + "\u0001")).encode(), [SECRET]),
    "currency-not-iso": (json.dumps(with_secret(currency="SECRETCUR")).encode(),
                         ["SECRETCUR"]),
    "total-not-matching": (json.dumps(with_secret(totalPrice="98765.43")).encode(),
                           ["98765.43"]),
    "unknown-field-beside-secrets": (
        json.dumps({**with_secret(), "extra": 1}).encode(), [SECRET]),
}


@pytest.mark.parametrize("name", REFUSED_WITH_SECRETS)
def test_a_refused_body_shows_no_classified_value_without_details(make_system, name,
                                                                   caplog):
    """Dead letter, view, log and answer hold no classified value unless details (X10)."""
    import logging

    import httpx

    system = make_system()
    caplog.set_level(logging.INFO)
    body, secrets = REFUSED_WITH_SECRETS[name]
    message_id = f"secret-{name}"
    dead = deliver(system, SUBMIT_QUEUE, body, message_id)
    overview = f"{system.host.base_url}/api/ops/dashboard/api/overview"
    (row,) = [r for r in httpx.get(overview, timeout=30).json()["messaging"]["deadLettered"]
              if r["messageId"] == message_id]
    logged = [r.getMessage() for r in caplog.records if message_id in r.getMessage()]
    assert logged, "the dead-lettering is logged"
    digest = hashlib.sha256(message_id.encode()).hexdigest()[:16]
    (answer,) = [m.body.decode() for m in system.engine.peek("replies-acme", 100_000)
                 if m.message_id.endswith(f":refused:{digest}")]
    seen = {"dead-letter description": dead.dead_letter_error_description,
            "view": json.dumps(row, ensure_ascii=False), "log": "\n".join(logged),
            "answer": answer}
    for where, text in seen.items():
        for secret in secrets:
            assert secret not in text, f"{where} shows {secret}"
    # An operator with the details role sees the body as it came.
    (whole,) = [r for r in httpx.get(overview, params={"details": "true"}, timeout=30).json()[
        "messaging"]["deadLettered"] if r["messageId"] == message_id]
    assert all(secret in json.dumps(whole["body"], ensure_ascii=False) for secret in secrets)
