"""The app's Service Bus sender (orders/messaging/azure.py) over the real SDK and AMQP 1.0.

The adapter gets a real ``ServiceBusClient`` pointed at the stand-in (plain AMQP, the
emulator's mode) that authenticates with a bearer token through the $cbs handshake, as the
Function App's managed identity does. What arrives is read back through the SDK's own
receiver and the administration API, never from the stand-in's memory.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta

import pytest
from azure.servicebus import ServiceBusClient
from azure.servicebus.management import ServiceBusAdministrationClient

from orders.messaging import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    OutgoingMessage,
    QueueNotFoundError,
)
from orders.messaging.azure import AzureServiceBusSender
from tests.wire.stand_in import LISTEN_TOKEN, MANAGE_TOKEN, StaticTokenCredential


@pytest.fixture
def sender(stand_in):
    adapter = AzureServiceBusSender(client=stand_in.token_client(retry_total=0))
    yield adapter
    adapter.close()


@pytest.fixture
def admin(stand_in, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(stand_in.ca_file))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with ServiceBusAdministrationClient(stand_in.https_namespace,
                                        StaticTokenCredential(MANAGE_TOKEN)) as client:
        yield client


def receive_all(stand_in, queue, expect, max_wait_s=5.0):
    """Receive (and complete) until ``expect`` messages arrived or ``max_wait_s`` passed."""
    received = []
    with stand_in.token_client() as client, client.get_queue_receiver(queue) as receiver:
        while len(received) < expect:
            batch = receiver.receive_messages(max_message_count=expect - len(received),
                                              max_wait_time=max_wait_s)
            if not batch:
                break
            for message in batch:
                receiver.complete_message(message)
            received += batch
    return received


def test_send_delivers_body_id_properties_and_correlation(stand_in, queue, sender):
    sender.send(queue, OutgoingMessage(
        {"orderId": "o-1", "step": "charge"},
        message_id="o-1/charge/1",
        application_properties={"orderId": "o-1", "attempt": 2},
        correlation_id="order-o-1-attempt-2",
    ))
    (message,) = receive_all(stand_in, queue, 1)
    assert b"".join(message.body) == b'{"orderId":"o-1","step":"charge"}'
    assert message.message_id == "o-1/charge/1"
    # The Python SDK returns received string properties as bytes (azure-sdk-for-python#45082).
    assert message.application_properties == {b"orderId": b"o-1", b"attempt": 2}
    assert message.correlation_id == "order-o-1-attempt-2"
    assert message.content_type == "application/json"
    assert message.delivery_count == 0  # the wire's header: no earlier delivery


def test_send_many_sends_one_batch_in_order(stand_in, queue, sender):
    sender.send_many(queue, [OutgoingMessage({"n": n}, message_id=f"m-{n}") for n in range(5)])
    received = receive_all(stand_in, queue, 5)
    assert [m.message_id for m in received] == [f"m-{n}" for n in range(5)]
    assert [m.sequence_number for m in received] == sorted(m.sequence_number for m in received)


def test_a_resend_with_the_same_message_id_is_dropped(stand_in, queue, sender, admin):
    # An activity re-run resends its agent request with the same MessageId (SPEC A4, X2).
    for _ in range(3):
        sender.send(queue, OutgoingMessage({"orderId": "o-2"}, message_id="o-2/ship/1"))
    assert admin.get_queue_runtime_properties(queue).active_message_count == 1
    assert [m.message_id for m in receive_all(stand_in, queue, 1)] == ["o-2/ship/1"]


def test_a_scheduled_message_waits_for_its_time(stand_in, queue, sender, admin):
    due = datetime.now(UTC) + timedelta(seconds=1)
    sender.send(queue, OutgoingMessage({"retry": 1}, message_id="later",
                                       scheduled_enqueue_time=due))
    properties = admin.get_queue_runtime_properties(queue)
    assert (properties.active_message_count, properties.scheduled_message_count) == (0, 1)
    (message,) = receive_all(stand_in, queue, 1, max_wait_s=10)
    assert message.message_id == "later"
    assert datetime.now(UTC) >= due


def test_an_unknown_queue_is_queue_not_found(sender):
    with pytest.raises(QueueNotFoundError) as info:
        sender.send("no-such-queue", OutgoingMessage({}))
    assert info.value.retryable is False
    assert "no-such-queue" in str(info.value)


def test_a_message_over_the_size_limit_is_rejected_by_the_broker(queue, sender):
    # A single message goes out as is; the broker refuses it (rejected outcome).
    with pytest.raises(MessageRejectedError) as info:
        sender.send(queue, OutgoingMessage({"blob": "x" * 300_000}))
    assert info.value.retryable is False
    assert "message-size-exceeded" in str(info.value)


def test_a_batch_over_the_link_limit_is_refused_before_sending(queue, sender):
    # The SDK sizes a batch by the max-message-size the broker announced on attach (256 KB).
    with pytest.raises(MessageRejectedError):
        sender.send_many(queue, [OutgoingMessage({"blob": "x" * 150_000}) for _ in range(2)])


def test_an_identity_without_send_is_refused_and_not_retried_as_transient(stand_in, queue):
    adapter = AzureServiceBusSender(client=stand_in.token_client(LISTEN_TOKEN, retry_total=0))
    try:
        with pytest.raises(MessagingError) as info:
            adapter.send(queue, OutgoingMessage({}))
    finally:
        adapter.close()
    assert type(info.value) is MessagingError
    assert info.value.retryable is False


def test_an_unreachable_namespace_is_transient():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = ServiceBusClient(f"127.0.0.1:{port}", StaticTokenCredential(MANAGE_TOKEN),
                              use_tls=False, retry_total=0)
    adapter = AzureServiceBusSender(client=client)
    try:
        with pytest.raises(MessagingUnavailableError) as info:
            adapter.send("orders", OutgoingMessage({}))
    finally:
        adapter.close()
    assert info.value.retryable is True


def test_the_connection_string_of_the_emulator_works_too(stand_in, queue):
    # UseDevelopmentEmulator=true: plain AMQP on the given port, SAS token via $cbs.
    client = ServiceBusClient.from_connection_string(stand_in.connection_string(), retry_total=0)
    adapter = AzureServiceBusSender(client=client)
    try:
        adapter.send(queue, OutgoingMessage({"via": "sas"}, message_id="sas-1"))
    finally:
        adapter.close()
    assert [m.message_id for m in receive_all(stand_in, queue, 1)] == ["sas-1"]
