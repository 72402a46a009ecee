"""Queue counts and peeks for the dashboard, locally and through the Azure SDK's shapes."""

import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from orders.messaging.browse import (
    AzureQueueBrowser,
    QueueBrowser,
    peek_newest,
)
from orders.messaging.local import LocalQueueBrowser
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

    def peek_messages(self, max_message_count, *, sequence_number=0):
        return [m for m in self.messages if m.sequence_number >= sequence_number
                ][:max_message_count]


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


def test_the_azure_browser_peeks_with_the_sdks_own_keyword():
    import inspect

    from azure.servicebus import ServiceBusReceiver
    assert "sequence_number" in inspect.signature(ServiceBusReceiver.peek_messages).parameters


class CountingBrowser:
    """A local browser that counts its peeks."""

    def __init__(self, inner):
        self.inner, self.peeks = inner, 0

    def peek(self, *args, **kwargs):
        self.peeks += 1
        return self.inner.peek(*args, **kwargs)


def test_peek_newest_reads_the_newest_messages_newest_first_across_gaps(tmp_path):
    with open_engine(tmp_path) as engine:
        for n in range(40):
            engine.send("operator-alerts", json.dumps({"n": n}).encode(), message_id=f"a{n}")
        # Take every message but the first and the last five: a wide gap of sequence numbers.
        taken = engine.receive("operator-alerts", 40, lock_owner="test")
        for message in taken[1:35]:
            engine.complete("operator-alerts", message.lock_token)
    browser = CountingBrowser(LocalQueueBrowser(tmp_path))
    newest = peek_newest(browser, "operator-alerts", 6)
    assert [m.body["n"] for m in newest] == [39, 38, 37, 36, 35, 0]
    assert [m.body["n"] for m in peek_newest(browser, "operator-alerts", 2)] == [39, 38]
    assert peek_newest(browser, "replies-nobody", 5) == []


def test_peek_newest_costs_a_logarithm_of_the_queue(tmp_path):
    with open_engine(tmp_path) as engine:
        for n in range(3000):
            engine.send("operator-alerts", json.dumps({"n": n}).encode(), message_id=f"a{n}")
    browser = CountingBrowser(LocalQueueBrowser(tmp_path))
    newest = peek_newest(browser, "operator-alerts", 25)
    assert [m.body["n"] for m in newest] == list(range(2999, 2974, -1))
    assert browser.peeks <= 2 * 12 + 2  # 3000 < 2**12
