"""The Azure adapter without a Service Bus namespace.

No real namespace is reachable from tests, so these check what the adapter controls: the
ServiceBusMessage objects it builds, how it uses the client (through a fake client), how
SDK errors map to port errors, and that it refuses connection strings. Delivery against a
real namespace is not tested here.
"""

from datetime import UTC, datetime, timedelta

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus import exceptions as sb_errors

from orders.errors import OrderServiceError
from orders.messaging import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    OutgoingMessage,
    QueueNotFoundError,
)
from orders.messaging.azure import (
    AzureServiceBusSender,
    to_service_bus_message,
    validate_namespace,
)


class FakeQueueSender:
    def __init__(self, queue_name, fail_with=None):
        self.queue_name = queue_name
        self.sent = []
        self.closed = False
        self.fail_with = fail_with

    def send_messages(self, message):
        if self.fail_with is not None:
            raise self.fail_with
        self.sent.append(message)

    def close(self):
        self.closed = True


class FakeClient:
    def __init__(self, fail_with=None):
        self.senders = {}
        self.closed = False
        self.fail_with = fail_with

    def get_queue_sender(self, queue_name):
        assert queue_name not in self.senders, "sender must be reused per queue"
        self.senders[queue_name] = FakeQueueSender(queue_name, self.fail_with)
        return self.senders[queue_name]

    def close(self):
        self.closed = True


def _body(sb_message):
    return b"".join(sb_message.body)


def test_service_bus_message_carries_every_field():
    due = datetime(2030, 1, 1, 12, tzinfo=UTC)
    sb_message = to_service_bus_message(
        OutgoingMessage(
            {"orderId": "o-1"},
            message_id="o-1/charge/1",
            application_properties={"orderId": "o-1", "attempt": 2},
            correlation_id="instance-o-1-2",
            scheduled_enqueue_time=due,
            time_to_live=timedelta(minutes=5),
        )
    )
    assert isinstance(sb_message, ServiceBusMessage)
    assert _body(sb_message) == b'{"orderId":"o-1"}'
    assert sb_message.message_id == "o-1/charge/1"
    assert sb_message.application_properties == {"orderId": "o-1", "attempt": 2}
    assert sb_message.correlation_id == "instance-o-1-2"
    assert sb_message.content_type == "application/json"
    assert sb_message.scheduled_enqueue_time_utc == due
    assert sb_message.time_to_live == timedelta(minutes=5)


def test_send_and_send_many_go_through_one_sender_per_queue():
    client = FakeClient()
    sender = AzureServiceBusSender(client=client)
    sender.send("orders", OutgoingMessage({"n": 1}, message_id="a"))
    sender.send_many("orders", [OutgoingMessage({"n": 2}), OutgoingMessage({"n": 3})])
    sender.send_many("orders", [])
    sent = client.senders["orders"].sent
    assert isinstance(sent[0], ServiceBusMessage)
    assert sent[0].message_id == "a"
    assert [_body(m) for m in sent[1]] == [b'{"n":2}', b'{"n":3}']
    assert len(sent) == 2
    sender.close()
    assert client.senders["orders"].closed and client.closed


@pytest.mark.parametrize(
    ("sdk_error", "port_error", "retryable"),
    [
        (sb_errors.MessagingEntityNotFoundError(message="sdk says no"), QueueNotFoundError, False),
        (sb_errors.MessageSizeExceededError(message="sdk says no"), MessageRejectedError, False),
        (
            sb_errors.ServiceBusServerBusyError(message="sdk says no"),
            MessagingUnavailableError,
            True,
        ),
        (
            sb_errors.ServiceBusConnectionError(message="sdk says no"),
            MessagingUnavailableError,
            True,
        ),
        (
            sb_errors.ServiceBusQuotaExceededError(message="sdk says no"),
            MessagingUnavailableError,
            True,
        ),
        (sb_errors.ServiceBusAuthorizationError(message="sdk says no"), MessagingError, False),
    ],
)
def test_sdk_errors_become_port_errors(sdk_error, port_error, retryable):
    sender = AzureServiceBusSender(client=FakeClient(fail_with=sdk_error))
    with pytest.raises(port_error) as info:
        sender.send("orders", OutgoingMessage({}))
    assert type(info.value) is port_error
    assert isinstance(info.value, OrderServiceError)
    assert info.value.__cause__ is sdk_error
    assert info.value.retryable is retryable
    assert info.value.retry_after is None
    assert "orders" in str(info.value)


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k", "connection string"),
        ("sb://ns.servicebus.windows.net", "not a host name"),
        ("ns.servicebus.windows.net:5671", "not a host name"),
        ("", "required"),
    ],
)
def test_namespace_must_be_a_bare_host_name(value, rule):
    with pytest.raises(ValueError, match=f"fully_qualified_namespace: .*{rule}"):
        validate_namespace(value)
