"""Queue counts and peeks for the dashboard, locally and through the Azure SDK's shapes."""

import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from orders.messaging.browse import AzureQueueBrowser, LocalQueueBrowser, QueueBrowser
from sqlitebus import open_engine


def test_local_browser_counts_and_peeks_without_taking_messages(tmp_path):
    with open_engine(tmp_path) as engine:
        engine.send("operator-alerts", json.dumps({"kind": "OrderError"}).encode(),
                    message_id="a1", application_properties={"kind": "OrderError"})
        engine.send("orders-acme", b"<not json>", message_id="poison")
        (poison,) = engine.receive("orders-acme", 1, lock_owner="test")
        engine.dead_letter("orders-acme", poison.lock_token, "InvalidJson", "body: not JSON")
    browser = LocalQueueBrowser(tmp_path)
    assert isinstance(browser, QueueBrowser)
    counts = browser.queue_counts(["operator-alerts", "orders-acme"])
    assert [(c.active, c.dead_letter) for c in counts.values()] == [(1, 0), (0, 1)]
    (alert,) = browser.peek("operator-alerts", 10)
    assert (alert.body, alert.application_properties, alert.message_id) == \
        ({"kind": "OrderError"}, {"kind": "OrderError"}, "a1")
    (dead,) = browser.peek("orders-acme", 10, dead_letter=True)
    assert (dead.body, dead.dead_letter_reason, dead.dead_letter_description) == \
        ("<not json>", "InvalidJson", "body: not JSON")
    assert browser.queue_counts(["operator-alerts"])["operator-alerts"].active == 1
    with pytest.raises(ValueError, match="max_count"):
        browser.peek("operator-alerts", 0)


class Receiver:
    def __init__(self, messages, opened):
        self.messages, self.opened = messages, opened

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.opened.append("closed")

    def peek_messages(self, max_message_count):
        return self.messages[:max_message_count]


def test_azure_browser_turns_sdk_messages_into_text_keyed_rows():
    sdk_message = SimpleNamespace(
        sequence_number=7, message_id="m-1", enqueued_time_utc=datetime(2030, 1, 1, tzinfo=UTC),
        delivery_count=None, application_properties={b"orderId": b"acme~ORD-1"},
        body=iter([b'{"status": ', b'"OrderFailed"}']), dead_letter_reason="SchemaViolation",
        dead_letter_error_description="order.total: must be positive")
    receivers = []

    class Client:
        def get_queue_receiver(self, queue, sub_queue=None):
            receivers.append((queue, str(sub_queue)))
            return Receiver([sdk_message], receivers)

        def close(self):
            receivers.append("client closed")

    admin = SimpleNamespace(get_queue_runtime_properties=lambda q: SimpleNamespace(
        active_message_count=3, dead_letter_message_count=1), close=lambda: None)
    browser = AzureQueueBrowser("ns.servicebus.windows.net", None, admin, Client())
    assert browser.queue_counts(["orders-acme"])["orders-acme"].active == 3
    (row,) = browser.peek("orders-acme", 5, dead_letter=True)
    assert (row.body, row.application_properties, row.delivery_count, row.sequence_number) == \
        ({"status": "OrderFailed"}, {"orderId": "acme~ORD-1"}, 0, 7)
    assert row.dead_letter_reason == "SchemaViolation"
    assert receivers[0] == ("orders-acme", "ServiceBusSubQueue.DEAD_LETTER")
    browser.close()
    assert receivers[-1] == "client closed"
