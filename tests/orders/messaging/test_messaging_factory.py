"""``create_sender``: the backend setting picks the adapter, and each one is a sender."""

import pytest

from clocks import ManualClock
from orders.messaging import BACKEND_LOCAL, MessageSender, OutgoingMessage, create_sender
from orders.messaging.azure import AzureServiceBusSender
from orders.messaging.local import LocalMessageSender
from sqlitebus import ServiceBusEngine


def test_create_sender_local_opens_engine_in_data_dir(tmp_path):
    clock = ManualClock()
    sender = create_sender(" Local ", data_dir=tmp_path, clock=clock)
    try:
        assert isinstance(sender, LocalMessageSender)
        assert isinstance(sender, MessageSender)
        sender.send("orders", OutgoingMessage({"a": 1}, message_id="m-1"))
    finally:
        sender.close()
    with ServiceBusEngine.in_data_dir(tmp_path, clock=clock) as engine:
        assert [m.message_id for m in engine.peek("orders", 5)] == ["m-1"]


def test_factory_builds_identity_based_client_without_network():
    class FakeCredential:
        def get_token(self, *scopes, **kwargs):  # never called: no connection is opened
            raise AssertionError("no token expected")

    sender = create_sender(
        "servicebus",
        fully_qualified_namespace="Orders-Dev.servicebus.windows.net",
        credential=FakeCredential(),
    )
    try:
        assert isinstance(sender, AzureServiceBusSender)
        assert isinstance(sender, MessageSender)
        assert sender._client.fully_qualified_namespace == "orders-dev.servicebus.windows.net"
    finally:
        sender.close()


@pytest.mark.parametrize(
    ("backend", "kwargs", "field"),
    [
        ("rabbitmq", {}, "backend: 'rabbitmq' is not one of"),
        (BACKEND_LOCAL, {}, "data_dir: required"),
        ("servicebus", {}, "fully_qualified_namespace: required"),
    ],
)
def test_create_sender_errors_name_the_setting(backend, kwargs, field):
    with pytest.raises(ValueError, match=field):
        create_sender(backend, **kwargs)
