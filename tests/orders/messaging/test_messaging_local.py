import sqlite3
from datetime import timedelta

import pytest

from clocks import ManualClock
from devhost.servicebus import ServiceBusEngine, ServiceBusError, load_queue_catalog
from orders.errors import OrderServiceError
from orders.messaging import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    OutgoingMessage,
    QueueNotFoundError,
)
from orders.messaging.local import LocalMessageSender


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def engine(tmp_path, clock):
    # The repository's infra/queues.json: the app's queue names must exist in it.
    eng = ServiceBusEngine.in_data_dir(tmp_path, catalog=load_queue_catalog(), clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def sender(engine):
    return LocalMessageSender(engine)


def test_send_carries_every_field_to_the_queue(sender, engine, clock):
    sender.send(
        "orders",
        OutgoingMessage(
            {"orderId": "o-1", "total": 12.5},
            message_id="submit-o-1",
            application_properties={"orderId": "o-1", "attempt": 1},
            correlation_id="o-1",
        ),
    )
    [msg] = engine.receive("orders", 1)
    assert msg.json() == {"orderId": "o-1", "total": 12.5}
    assert msg.message_id == "submit-o-1"
    assert msg.application_properties == {"orderId": "o-1", "attempt": 1}
    assert msg.correlation_id == "o-1"
    assert msg.content_type == "application/json"
    assert msg.enqueued_time == clock.now()


def test_resend_with_same_message_id_is_dropped(sender, engine):
    request = OutgoingMessage({"step": "charge"}, message_id="o-1/charge/1")
    sender.send("payment-requests", request)
    sender.send("payment-requests", request)
    assert engine.counts("payment-requests").active == 1


def test_scheduled_message_waits_for_its_time(sender, engine, clock):
    due = clock.now() + timedelta(minutes=2)
    sender.send("operator-alerts", OutgoingMessage({"x": 1}, scheduled_enqueue_time=due))
    assert engine.receive("operator-alerts", 1) == []
    clock.advance(timedelta(minutes=2))
    [msg] = engine.receive("operator-alerts", 1)
    assert msg.scheduled_enqueue_time == due


def test_send_many_is_one_batch_and_keeps_order(sender, engine):
    sender.send_many("agent-replies", [OutgoingMessage({"n": i}) for i in range(3)])
    assert [m.json()["n"] for m in engine.receive("agent-replies", 10)] == [0, 1, 2]
    sender.send_many("agent-replies", [])
    assert engine.counts("agent-replies").active == 3


def test_oversized_batch_rejected_and_nothing_stored(sender, engine):
    big = "x" * (200 * 1024)
    with pytest.raises(MessageRejectedError, match="batch limit"):
        sender.send_many("orders", [OutgoingMessage(big), OutgoingMessage(big)])
    with pytest.raises(MessageRejectedError, match="maximum message size"):
        sender.send("orders", OutgoingMessage("y" * (300 * 1024)))
    assert engine.counts("orders").active == 0


def test_unknown_queue_raises_port_error_naming_it(sender):
    with pytest.raises(QueueNotFoundError, match="queue 'order' not found") as info:
        sender.send("order", OutgoingMessage({}))
    assert info.value.queue == "order"
    assert isinstance(info.value, OrderServiceError)
    assert info.value.retryable is False
    assert info.value.retry_after is None


def test_busy_queue_file_is_retryable_and_sends_nothing(sender, engine, tmp_path):
    # Another process holds the file's write lock; the engine gives up at once (SQLITE_BUSY).
    holder = sqlite3.connect(engine._path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    engine._conn.execute("PRAGMA busy_timeout=0")
    try:
        with pytest.raises(MessagingUnavailableError) as info:
            sender.send("orders", OutgoingMessage({"n": 1}, message_id="busy-1"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert info.value.__cause__.sqlite_errorname == "SQLITE_BUSY"
    assert info.value.retryable is True
    assert info.value.retry_after is None
    sender.send("orders", OutgoingMessage({"n": 1}, message_id="busy-1"))
    assert engine.counts("orders").active == 1


class FailingEngine:
    def __init__(self, error):
        self.error = error

    def send_many(self, queue, drafts):
        raise self.error


def test_other_sqlite_errors_are_permanent_messaging_errors():
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.Error) as raised:
        conn.execute("SELECT * FROM queue_is_locked")  # SQLITE_ERROR, whatever the text
    sender = LocalMessageSender(FailingEngine(raised.value))
    with pytest.raises(MessagingError) as info:
        sender.send("orders", OutgoingMessage({}))
    assert type(info.value) is MessagingError
    assert info.value.retryable is False


@pytest.mark.parametrize(("retryable", "kind"), [
    (False, MessagingError), (True, MessagingUnavailableError)])
def test_local_host_errors_carry_their_flag_over(retryable, kind):
    after = timedelta(seconds=3) if retryable else None
    error = ServiceBusError("engine refused", retryable=retryable, retry_after=after)
    with pytest.raises(MessagingError) as info:
        LocalMessageSender(FailingEngine(error)).send("orders", OutgoingMessage({}))
    assert type(info.value) is kind
    assert info.value.retryable is retryable
    assert info.value.retry_after == after


def test_reply_queue_of_a_client_is_created_on_demand(sender, engine):
    queue = engine.catalog.reply_queue_name("shop-1")
    sender.send(queue, OutgoingMessage({"status": "OrderReceived"}, correlation_id="o-1"))
    assert engine.counts(queue).active == 1


def test_close_leaves_a_shared_engine_open(engine):
    LocalMessageSender(engine).close()
    assert engine.counts("orders").active == 0
