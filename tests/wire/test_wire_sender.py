"""The app's Service Bus sender (orders/messaging/azure.py) over the real SDK and AMQP 1.0.

The adapter gets a real ``ServiceBusClient`` pointed at the stand-in (plain AMQP, the
emulator's mode) that authenticates with a bearer token through the $cbs handshake, as the
Function App's managed identity does. What arrives is read back through the SDK's own
receiver and the administration API, never from the stand-in's memory.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from azure.servicebus import ServiceBusClient
from azure.servicebus.management import ServiceBusAdministrationClient

from orders.messaging import MessagingError, MessagingUnavailableError, OutgoingMessage
from orders.messaging.azure import AzureServiceBusSender
from tests.support.sender_contract import Delivered, SenderContract
from tests.wire.stand_in import (
    LISTEN_TOKEN,
    MANAGE_TOKEN,
    ServiceBusStandIn,
    StaticTokenCredential,
)


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


def delivered(message):
    """The contract's view of a received message.

    The Python SDK returns received string properties as bytes (azure-sdk-for-python#45082):
    they are decoded here, and :func:`test_the_sdk_hands_back_properties_as_bytes` keeps
    the raw form in view.
    """
    properties = {(k.decode() if isinstance(k, bytes) else k):
                  (v.decode() if isinstance(v, bytes) else v)
                  for k, v in (message.application_properties or {}).items()}
    return Delivered(b"".join(message.body), message.message_id, message.sequence_number,
                     properties, message.correlation_id, message.content_type,
                     message.scheduled_enqueue_time_utc)


@dataclass
class WireBed:
    """The contract's view of the stand-in: a fresh queue, read through the SDK."""

    sender: AzureServiceBusSender
    stand_in: ServiceBusStandIn
    admin: ServiceBusAdministrationClient
    queue: str

    def receive(self, count):
        # Long enough for a message scheduled two seconds ahead.
        return [delivered(m) for m in receive_all(self.stand_in, self.queue, count,
                                                  max_wait_s=10)]

    def counts(self):
        properties = self.admin.get_queue_runtime_properties(self.queue)
        return properties.active_message_count, properties.scheduled_message_count

    def now(self):
        return datetime.now(UTC)

    def reach(self, when):
        """Nothing to do: the broker's clock runs, and :meth:`receive` waits."""


@pytest.fixture
def bed(stand_in, queue, sender, admin):
    return WireBed(sender, stand_in, admin, queue)


class TestAzureSender(SenderContract):
    SIZE_REFUSAL = "message-size-exceeded"  # the broker's rejected outcome
    # The SDK sizes a batch by the max-message-size the broker announced on attach and
    # refuses it before sending; its wording is the SDK's own.
    BATCH_REFUSAL = None


def test_the_sdk_hands_back_properties_as_bytes(stand_in, queue, sender):
    sender.send(queue, OutgoingMessage({}, application_properties={"orderId": "o-1",
                                                                   "attempt": 2}))
    (message,) = receive_all(stand_in, queue, 1)
    assert message.application_properties == {b"orderId": b"o-1", b"attempt": 2}
    assert message.delivery_count == 0  # the wire's header: no earlier delivery


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
