"""Strict message bodies: whatever a body holds, the consuming function either accepts it or
dead-letters it with a reason, on the first delivery; it never raises for it (S1, A1, A4).

The property tests feed random bytes, random JSON and random order-shaped messages to the
submission trigger's own function (with SQLite stores, a recording sender and settler), and
random bodies to the agent request and reply parsers.
"""

import asyncio
import json
from decimal import Decimal

import azure.durable_functions as df
import httpx
import pytest
from azure.functions.servicebus import ServiceBusMessage
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from agents.handler import parse_request
from clocks import ManualClock
from orders import runtime
from orders.lifecycle.ids import order_key
from orders.models import Order, wire
from orders.models.messages import AgentReply, AgentRequest, SubmitOrder
from orders.settings import Settings
from scheduler import blueprint
from scheduler.replies import parse_reply
from tests.support.durable_client import StartRecorder
from tests.support.stores import sqlite_stores

FUZZ = settings(max_examples=120, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- the strict decoder ------------------------------------------------------------------

@pytest.mark.parametrize(("body", "description"), [
    (b"[" * 100_000 + b"]" * 100_000, "body: nested deeper than 32"),
    (b'{"a": ' + b"[" * 33 + b"]" * 33 + b"}", "a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0"
                                                ".0.0.0.0.0.0.0.0: nested deeper than 32"),
    (b'{"n": ' + b"7" * 100_000 + b"}", "n: integer of 100000 digits is outside the signed"),
    (b'{"n": -9223372036854775809}', "n: integer of 19 digits is outside"),
    (b'{"x": [1e999]}', "x.0: number overflows a double"),
    (b'{"x": NaN}', "x: NaN is not a JSON number"),
    (b'{"x": Infinity}', "x: Infinity is not a JSON number"),
    (b'{"a": {"b": 1, "b": 2}}', "a: duplicate name 'b' in one object"),
    (b'{"a": "\\ud800x"}', "a: contains an unpaired surrogate \\ud800 at index 0"),
    (b'{"\\udfff": 1}', "body: a name contains an unpaired surrogate \\udfff"),
    (b'{"a": "\xff"}', "body: not UTF-8: invalid start byte (byte 0xff at offset 7)"),
    (b'{"a": "\xed\xa0\x80"}', "body: not UTF-8"),  # a surrogate encoded as if UTF-8
    ('{"a": 1}'.encode("utf-16"), "body: not UTF-8"),
    (b'{"a": 1', "body: not valid JSON: Expecting ',' delimiter at line 1 column 8"),
    (b"", "body: not valid JSON: Expecting value at line 1 column 1"),
])
def test_every_form_of_bad_json_is_refused_naming_where_and_why(body, description):
    with pytest.raises(wire.InvalidMessage) as caught:
        wire.loads(body)
    assert caught.value.reason == "InvalidJson"
    assert caught.value.description.startswith(description), caught.value.description
    caught.value.description.encode("utf-8")  # always recordable


def test_strict_json_that_is_fine_decodes_as_usual():
    body = '\ufeff{"a": [1, -9223372036854775808, 2.5e-3, "\u00e9\U0001f600", null, true]}'
    assert wire.loads(body.encode()) == {"a": [1, -2**63, 0.0025, "\u00e9\U0001f600", None,
                                              True]}
    depth_32 = "[" * 32 + "]" * 32
    assert wire.loads(depth_32) == json.loads(depth_32)


def test_a_validator_that_raises_something_else_is_a_schema_violation():
    class Odd(SubmitOrder):
        @classmethod
        def model_validate(cls, data, **kwargs):
            raise ZeroDivisionError("boom")

    with pytest.raises(wire.InvalidMessage) as caught:
        wire.parse(b"{}", Odd)
    assert caught.value.reason == "SchemaViolation"
    # The type names the fault; its text may quote the body, so it is not repeated (X10).
    assert caught.value.description.endswith("cannot be checked: ZeroDivisionError")
    assert "boom" not in caught.value.description


# -- random bodies through the submission trigger ------------------------------------------

class Sent:
    """Records what the function sends, encoded as the real sender would encode it."""

    def __init__(self):
        self.messages = []

    def send(self, queue, message):
        message.body_bytes()  # NaN or an unpaired surrogate would raise here
        self.messages.append((queue, message))

    def close(self):
        pass


class Settled:
    """Records dead-letters as the trigger's settlement port would perform them."""

    def __init__(self):
        self.dead = {}

    def dead_letter(self, queue, message, reason, description):
        (reason + description).encode("utf-8")
        self.dead[message.message_id] = (queue, reason, description)


def submission_of(client_id: str):
    """``client_id``'s submission as the app registers it, called with a recording client.

    The SDK's middleware builds the durable client from its binding JSON; the user code it
    wraps gets a :class:`StartRecorder` here instead, so accepted orders start without a
    task hub.
    """
    registry = df.DFApp()
    registry.register_functions(blueprint.client_submissions([client_id]))
    [function] = [f for f in registry.get_functions()
                  if f.get_function_name() == f"submit_order_{client_id}"]
    user_code = function.get_user_function().__wrapped__
    return lambda msg: asyncio.run(user_code(msg=msg, client=StartRecorder()))


def keyed(body: bytes) -> tuple[SubmitOrder, str]:
    """The accepted message and the key its order is stored under (client acme's)."""
    parsed = wire.parse(body, SubmitOrder)
    return parsed, order_key("acme", parsed.order.order_id)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """Client acme's submission function with SQLite stores and recording messaging."""
    tmp = tmp_path_factory.mktemp("bodies")
    clock = ManualClock()
    svc = runtime.Services(
        Settings(DEVHOST_DATA_DIR=str(tmp), MAX_IN_FLIGHT=1_000_000), clock,
        sqlite_stores(tmp, clock), Sent(), None, httpx.Client(), Settled())
    runtime.use(svc)
    yield svc, submission_of("acme")
    runtime.use(None)


counter = iter(range(10**9))


def note(outcome: str) -> None:
    """Count outcomes in hypothesis' statistics (``--hypothesis-show-statistics``)."""
    if currently_in_test_context():
        event(outcome)


def deliver(app, body: bytes):
    """Deliver ``body`` once; assert it is stored as a valid order or dead-lettered.

    Returns the dead-letter ``(queue, reason, description)``, or None if it was stored.
    """
    svc, submit_order = app
    message_id = f"m-{next(counter)}"
    submit_order(ServiceBusMessage(body=body, message_id=message_id, delivery_count=1,
                                   lock_token=message_id, application_properties={},
                                   user_properties={}))  # never raises for a body
    if message_id in svc.settler.dead:
        queue, reason, description = svc.settler.dead[message_id]
        assert queue == "orders-acme"
        assert reason in {"InvalidJson", "SchemaViolation", "ConflictingOrder", "ClientMismatch"}
        assert description
        note(f"dead-lettered: {reason}")
        if reason == "ConflictingOrder":
            assert svc.stores.orders.get(keyed(body)[1]) is not None
        return svc.settler.dead[message_id]
    parsed, key = keyed(body)  # accepted: a valid SubmitOrder of client acme
    assert parsed.client_id == "acme" and parsed.reply_to == "replies-acme"
    assert svc.stores.orders.get(key) == Order.of_client(parsed.order, key)
    assert svc.stores.states.get(key).reply_to == parsed.reply_to
    note("stored")


TEXT = st.text(st.characters(exclude_categories=()), max_size=12)  # surrogates included
LEAVES = (st.none() | st.booleans() | st.integers() | st.integers(2**62, 2**70)
          | st.floats() | st.sampled_from([1e308, -1e308, 5e-324]) | TEXT)
JSON = st.recursive(LEAVES, lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(TEXT, children, max_size=4), max_leaves=20)


def encode(value, ascii_only: bool) -> bytes:
    """JSON text as a careless sender writes it: NaN literals, surrogates, any encoding."""
    text = json.dumps(value, allow_nan=True, ensure_ascii=ascii_only)
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_are_stored_or_dead_lettered(app, body):
    deliver(app, body)


@FUZZ
@given(JSON, st.booleans())
def test_random_json_is_stored_or_dead_lettered(app, value, ascii_only):
    deliver(app, encode(value, ascii_only))


@FUZZ
@given(st.integers(33, 5000), st.sampled_from(["[", '{"a":']))
def test_deep_nesting_at_any_depth_is_dead_lettered(app, depth, opener):
    closer = "]" if opener == "[" else "}"
    body = (opener * depth + "1" + closer * depth).encode()
    queue, reason, description = deliver(app, body)
    assert reason == "InvalidJson"
    assert "nested deeper than 32 objects or arrays" in description  # however deep


@st.composite
def order_messages(draw):
    """A valid order message, then up to three fields replaced by random JSON."""
    lines = [{"sku": draw(st.sampled_from(["SKU-1", "SKU-2", "A.b_c-9"])),
              "quantity": draw(st.integers(1, 50)),
              "unitPrice": str(draw(st.decimals(Decimal("0.01"), Decimal("999.99"), places=2))),
              "discount": draw(st.sampled_from(["0", "0.05", "0.1"])),
              "tax": draw(st.sampled_from(["0", "0.08"]))}
             for _ in range(draw(st.integers(1, 3)))]
    total = sum(Decimal(li["quantity"]) * Decimal(li["unitPrice"])
                * (1 + Decimal(li["tax"])) * (1 - Decimal(li["discount"])) for li in lines)
    message = {"schemaVersion": 1, "clientId": "acme", "replyTo": "replies-acme",
               "order": {"orderId": draw(st.sampled_from([f"P-{i}" for i in range(8)])
                                            | st.from_regex(r"R-[0-9]{1,9}", fullmatch=True)),
                         "customerId": draw(st.sampled_from(["CUST-1", "CUST-2"])),
                         "currency": "USD", "lines": lines,
                         "totalPrice": str(total.quantize(Decimal("0.0001"))),
                         "createdAt": "2030-01-01T00:00:00Z"}}
    paths = [("order", k) for k in message["order"]] + [(k,) for k in message] + \
        [("order", "lines", i, k) for i, li in enumerate(lines) for k in li]
    junk = JSON | st.sampled_from(["1E+1000000", "1" * 500, "-1", "0.00001", "",
                                   "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
                                   "\ud800", 10**19, 2**63 - 1, float("nan"), float("inf")])
    for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):
        *parents, last = draw(st.sampled_from(paths))
        node = message
        for p in (*parents, last):  # an earlier replacement may have removed the path
            parent = node
            fits = (isinstance(node, dict) and p in node) or \
                (isinstance(node, list) and isinstance(p, int) and p < len(node))
            node = node[p] if fits else None
        if node is not None:
            parent[last] = draw(junk)
    return message


@FUZZ
@given(order_messages(), st.booleans())
def test_order_shaped_messages_are_stored_or_dead_lettered(app, message, ascii_only):
    deliver(app, encode(message, ascii_only))


def test_the_order_generator_reaches_acceptance_conflict_and_mismatch(app):
    svc, _ = app
    before = {k for k, v in svc.settler.dead.items()}
    base = {"schemaVersion": 1, "clientId": "acme", "replyTo": "replies-acme",
            "order": {"orderId": "Q-1", "customerId": "C", "currency": "USD",
                      "lines": [{"sku": "S", "quantity": 2, "unitPrice": "10.00"}],
                      "totalPrice": "20.00", "createdAt": "2030-01-01T00:00:00Z"}}
    deliver(app, json.dumps(base).encode())
    assert svc.stores.orders.get("acme~Q-1") is not None
    base["order"]["customerId"] = "D"
    deliver(app, json.dumps(base).encode())
    deliver(app, json.dumps({**base, "clientId": "globex"}).encode())
    new = {k: v for k, v in svc.settler.dead.items() if k not in before}
    assert [v[1] for v in new.values()] == ["ConflictingOrder", "ClientMismatch"]


# -- random bodies through the agent request and reply parsers ----------------------------

def parsed_or_refused(parse, body, model):
    try:
        result = parse(body)
    except wire.InvalidMessage as exc:
        assert exc.reason in {"InvalidJson", "SchemaViolation", "ServiceMismatch"}
        assert exc.description
        exc.description.encode("utf-8")
        return
    assert isinstance(result, model)
    json.dumps(result.model_dump(mode="json"), allow_nan=False).encode("utf-8")


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.builds(encode, JSON, st.booleans())))
def test_random_agent_requests_and_replies_are_parsed_or_refused(body):
    parsed_or_refused(parse_payment_request, body, AgentRequest)
    parsed_or_refused(parse_reply, body, AgentReply)


def parse_payment_request(body):
    return parse_request(body, "payment-requests")


@FUZZ
@given(st.dictionaries(st.sampled_from(["payload", "result", "reason", "attempts",
                                        "maxAttempts", "completeBy", "statusCode"]),
                       JSON, max_size=3))
def test_agent_messages_with_random_fields_are_parsed_or_refused(fields):
    request = {"schemaVersion": 1, "messageId": "O-1:1:charge", "orderId": "O-1",
               "instanceId": "O-1:1", "service": "payment", "operation": "charge",
               "idempotencyKey": "O-1:charge", "completeBy": "2030-01-01T00:00:00Z",
               "maxAttempts": 3, "eventName": "charge-reply", "payload": {}}
    reply = {"schemaVersion": 1, "messageId": "O-1:1:charge:reply", "orderId": "O-1",
             "instanceId": "O-1:1", "operation": "charge", "eventName": "charge-reply",
             "outcome": "Succeeded", "attempts": 1}
    for body in (encode({**request, **fields}, True), encode({**reply, **fields}, False)):
        parsed_or_refused(parse_payment_request, body, AgentRequest)
        parsed_or_refused(parse_reply, body, AgentReply)
