"""The Azure dead-letter path: a copy with its reason, through the real azure-servicebus.

In Azure a bad message is not settled through the Python worker's preview settlement
client: :class:`~orders.messaging.settlement.ForwardingSettler` sends a copy, with
``DeadLetterReason`` and ``DeadLetterErrorDescription``, to the ``dead-letters`` queue
through the app's own sender, and the trigger returns so that the host's auto-complete
completes the original (docs/deploy.md, "Dead letters in Azure"). These tests drive that
path through the real ``azure.functions.ServiceBusMessage`` and the real
``azure.servicebus`` sender, stopping only where the SDK would open its AMQP link.
"""

import json
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from azure.functions.servicebus import ServiceBusMessage as TriggerMessage
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSender

from orders.messaging.azure import AzureServiceBusSender
from orders.messaging.browse import AzureQueueBrowser
from orders.messaging.errors import MessagingUnavailableError
from orders.messaging.settlement import DEAD_LETTERS_QUEUE, ForwardingSettler
from orders.queues import load_queue_limits
from tests.infra.checks import INFRA, Grant, role_grants, scopes
from tests.infra.conftest import CLIENTS
from tests.infra.test_service_bus_roles import DATA_RECEIVER, DATA_SENDER, QUEUE

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "sb-orders-test.servicebus.windows.net"


class _NoTokenCredential:
    """A credential the test never reaches: the link is not opened."""

    def get_token(self, *scopes, **kwargs):  # pragma: no cover - never called
        raise AssertionError("the test must not authenticate")


def received(body=b'{"orderId": "ORD-1"', **overrides):
    """A message as the Python worker hands it to a Service Bus trigger (its own class)."""
    properties = {"traceparent": "00-abc-def-01", "n": 3}
    fields = {"body": body, "message_id": "m-1", "delivery_count": 1,
              "content_type": "application/json", "correlation_id": "ORD-1",
              "enqueued_time_utc": datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC),
              "application_properties": properties, "user_properties": properties,
              "lock_token": "lt-1"}
    fields.update(overrides)
    return TriggerMessage(**fields)


@pytest.fixture
def sent(monkeypatch):
    """What the real ServiceBusSender would put on the wire, by queue."""
    captured: list[tuple[str, ServiceBusMessage]] = []

    def no_link(self, message, timeout=None, last_exception=None):
        captured.append((self.entity_name, message))

    monkeypatch.setattr(ServiceBusSender, "_send", no_link)
    return captured


def settler():
    client = ServiceBusClient(NAMESPACE, _NoTokenCredential(), retry_total=0)
    return ForwardingSettler(AzureServiceBusSender(client=client))


def test_a_dead_lettered_message_reaches_the_dead_letters_queue_with_its_reason(sent):
    settler().dead_letter("orders-acme", received(), "InvalidBody",
                          "body: not valid JSON (line 1 column 20)")

    [(queue, message)] = sent
    assert queue == DEAD_LETTERS_QUEUE
    assert isinstance(message, ServiceBusMessage)
    assert b"".join(message.body) == b'{"orderId": "ORD-1"'
    assert message.message_id == "orders-acme/m-1"
    assert message.correlation_id == "ORD-1"
    assert message.content_type == "application/json"
    props = {k.decode() if isinstance(k, bytes) else k: v
             for k, v in message.application_properties.items()}
    assert props["DeadLetterReason"] == "InvalidBody"
    assert props["DeadLetterErrorDescription"] == "body: not valid JSON (line 1 column 20)"
    assert props["DeadLetterSource"] == "orders-acme"
    assert props["OriginalMessageId"] == "m-1"
    assert props["OriginalDeliveryCount"] == 1
    assert props["OriginalEnqueuedTimeUtc"] == "2030-01-02T03:04:05+00:00"
    assert props["n"] == 3


def test_a_body_that_is_not_utf8_is_forwarded_byte_for_byte(sent):
    settler().dead_letter("payment-requests", received(body=b"\xff\xfe\x00bad"),
                          "InvalidBody", "body: not UTF-8")

    [(_, message)] = sent
    assert b"".join(message.body) == b"\xff\xfe\x00bad"


def test_the_description_is_cut_to_the_4096_characters_service_bus_keeps(sent):
    settler().dead_letter("orders-acme", received(), "InvalidBody", "x" * 5000)

    [(_, message)] = sent
    description = message.application_properties["DeadLetterErrorDescription"]
    assert len(description) == 4096


def test_the_same_message_forwarded_twice_carries_one_message_id(sent):
    """A redelivery after a lost completion is dropped by duplicate detection."""
    for _ in range(2):
        settler().dead_letter("orders-acme", received(delivery_count=2), "R", "d")

    assert sent[0][1].message_id == sent[1][1].message_id


def test_messages_without_an_id_never_share_one(sent):
    for _ in range(2):
        settler().dead_letter("orders-acme", received(message_id=None), "R", "d")

    assert sent[0][1].message_id != sent[1][1].message_id


def test_a_failed_forward_raises_so_the_host_abandons_the_message(monkeypatch):
    """Never dropped (S1): the invocation fails and Service Bus redelivers."""
    from azure.servicebus.exceptions import ServiceBusConnectionError

    def unreachable(self, message, timeout=None, last_exception=None):
        raise ServiceBusConnectionError(message="namespace unreachable")

    monkeypatch.setattr(ServiceBusSender, "_send", unreachable)
    with pytest.raises(MessagingUnavailableError, match=DEAD_LETTERS_QUEUE):
        settler().dead_letter("orders-acme", received(), "InvalidBody", "d")


def test_the_dead_letters_queue_is_a_queue_of_the_catalogue():
    """Bicep creates every queue of infra/queues.json; the local host too."""
    assert DEAD_LETTERS_QUEUE in load_queue_limits()
    catalogue = json.loads((REPO / "infra" / "queues.json").read_text())
    assert DEAD_LETTERS_QUEUE in catalogue["queues"]


def test_the_preview_settlement_package_is_not_deployed():
    """docs/deploy.md, "Dead letters in Azure": the worker's preview settlement client
    is not used, so its package is not installed by the remote build."""
    requirements = (REPO / "requirements.txt").read_text().lower()
    assert "azurefunctions-extensions-bindings-servicebus" not in requirements


def test_operators_read_a_forwarded_message_like_a_dead_letter(sent):
    """The queue browser (ops summary, dashboard) shows the forwarded reason."""
    settler().dead_letter("orders-acme", received(), "ClientMismatch", "clientId: not acme")
    [(_, message)] = sent
    # As the receiver hands it back: AMQP application properties keyed by bytes.
    peeked = SimpleNamespace(
        sequence_number=1, message_id=message.message_id, enqueued_time_utc=None,
        delivery_count=0, body=message.body, dead_letter_reason=None,
        dead_letter_error_description=None,
        application_properties={k.encode(): v.encode() if isinstance(v, str) else v
                                for k, v in message.application_properties.items()})

    class Client:
        def get_queue_receiver(self, queue, sub_queue=None):
            assert (queue, sub_queue) == (DEAD_LETTERS_QUEUE, None)
            return nullcontext(SimpleNamespace(
                peek_messages=lambda max_message_count, sequence_number=0: [peeked]))

    browser = AzureQueueBrowser(NAMESPACE, None, client=None, data_client=Client())
    (row,) = browser.peek(DEAD_LETTERS_QUEUE, 5)
    assert (row.dead_letter_reason, row.dead_letter_description) == \
        ("ClientMismatch", "clientId: not acme")
    assert row.application_properties["DeadLetterSource"] == "orders-acme"


def test_operators_may_read_the_dead_letters_queue_and_nothing_more_of_service_bus():
    operator = "99999999-8888-7777-6666-555555555555"
    found = set()
    for scope in scopes(INFRA, {"clients": CLIENTS, "operatorPrincipalId": operator}):
        found |= {g for g in role_grants(scope) if g.principal == operator
                  and g.role in (DATA_SENDER, DATA_RECEIVER)}
    assert found == {Grant(operator, DATA_RECEIVER, QUEUE, "operator-alerts"),
                     Grant(operator, DATA_RECEIVER, QUEUE, DEAD_LETTERS_QUEUE)}


def test_the_summary_counts_every_message_of_the_dead_letters_queue_as_a_dead_letter():
    from orders.messaging.depths import AzureDepthReader

    counts = {"dead-letters": (3, 1), "orders-acme": (7, 2)}  # (active, dead-lettered)
    admin = SimpleNamespace(get_queue_runtime_properties=lambda q: SimpleNamespace(
        active_message_count=counts[q][0], dead_letter_message_count=counts[q][1]))
    reader = AzureDepthReader(NAMESPACE, None, client=admin)
    assert reader.dead_letter_depths(["dead-letters", "orders-acme"]) == {
        "dead-letters": 4, "orders-acme": 2}


# ---------------------------------------------------------------- a message near 256 KB
@pytest.mark.parametrize("body_bytes", [200 * 1024, 255 * 1024, 256 * 1024 - 100])
def test_a_copy_too_large_for_a_message_sends_the_reason_and_returns_the_original(
        sent, body_bytes):
    from orders.messaging.settlement import (
        BODY_OMITTED_PROPERTY,
        MAX_MESSAGE_BYTES,
        OversizedDeadLetter,
        copy_size,
        dead_letter_copy,
    )

    message = received(body=b"x" * body_bytes)
    fits = copy_size(dead_letter_copy("orders-acme", message, "InvalidBody", "too big")) \
        <= MAX_MESSAGE_BYTES
    if fits:
        settler().dead_letter("orders-acme", message, "InvalidBody", "too big")
        [(_, copy)] = sent
        assert len(b"".join(copy.body)) == body_bytes
        return
    # The copy would not fit: the reason goes without the body, and the invocation fails so
    # that Service Bus keeps the original (body intact) until its own dead-letter subqueue.
    with pytest.raises(OversizedDeadLetter, match="do not fit"):
        settler().dead_letter("orders-acme", message, "InvalidBody", "too big")
    [(queue, copy)] = sent
    assert queue == DEAD_LETTERS_QUEUE and b"".join(copy.body) == b""
    assert copy.application_properties["DeadLetterReason"] == "InvalidBody"
    assert copy.application_properties[BODY_OMITTED_PROPERTY] == body_bytes
    assert copy.message_id == "orders-acme/m-1"  # the redeliveries' copies are duplicates


def test_the_size_check_has_both_outcomes_in_its_matrix():
    from orders.messaging.settlement import MAX_MESSAGE_BYTES, copy_size, dead_letter_copy

    sizes = [copy_size(dead_letter_copy("q", received(body=b"x" * n), "R", "d"))
             for n in (200 * 1024, 256 * 1024 - 100)]
    assert sizes[0] <= MAX_MESSAGE_BYTES < sizes[1]
