"""``create_messaging``: the backend setting picks the adapters, in one place."""

import ast
from pathlib import Path

import pytest

from clocks import ManualClock
from orders.messaging import (
    BACKEND_LOCAL,
    MessageSender,
    OutgoingMessage,
    create_messaging,
    create_sender,
)
from orders.messaging.azure import AzureServiceBusSender
from orders.messaging.browse import AzureQueueBrowser, QueueBrowser
from orders.messaging.local import LocalMessageSender, LocalQueueBrowser, LocalSettler
from orders.messaging.settlement import ForwardingSettler
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


def test_the_local_backend_is_built_whole_over_one_data_folder(tmp_path):
    clock = ManualClock()
    messaging = create_messaging("local", data_dir=tmp_path, clock=clock)
    assert isinstance(messaging.settler, LocalSettler)
    assert isinstance(messaging.depths, LocalQueueBrowser)
    assert isinstance(messaging.depths, QueueBrowser)
    assert messaging.settler._engine is None  # a sender-only process opens no more
    try:
        messaging.sender.send("orders", OutgoingMessage({"a": 1}, message_id="m-1"))
        with ServiceBusEngine.in_data_dir(tmp_path, clock=clock) as engine:
            (received,) = engine.receive("orders", 1, "submission")
        messaging.settler.dead_letter("orders", received, "InvalidOrder", "order.lines: empty")
        assert messaging.depths.dead_letter_depths(["orders"]) == {"orders": 1}
    finally:
        messaging.sender.close()
        messaging.depths.close()


def test_the_azure_settler_forwards_through_the_backends_own_sender():
    messaging = create_messaging("servicebus",
                                 fully_qualified_namespace="ns.servicebus.windows.net")
    try:
        assert isinstance(messaging.settler, ForwardingSettler)
        assert messaging.settler._sender is messaging.sender
        assert isinstance(messaging.depths, AzureQueueBrowser)
    finally:
        messaging.sender.close()


ADAPTERS = {"LocalMessageSender", "LocalSettler", "LocalDepthReader", "LocalQueueBrowser",
            "AzureServiceBusSender", "ForwardingSettler", "AzureDepthReader",
            "AzureQueueBrowser"}
REPO = Path(__file__).resolve().parents[3]


def test_only_the_factory_builds_an_adapter_in_the_deployed_code():
    # The backend is chosen once: no other deployed module constructs an adapter.
    builders = set()
    for package in ("orders", "scheduler", "agents", "activities", "supervisor", "ops"):
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and node.func.id in ADAPTERS:
                    builders.add(path.relative_to(REPO).as_posix())
    assert builders == {"orders/messaging/factory.py"}
