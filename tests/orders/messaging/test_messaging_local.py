import sqlite3
from dataclasses import dataclass
from datetime import timedelta

import pytest

from clocks import ManualClock
from orders.messaging import MessagingError, MessagingUnavailableError, OutgoingMessage
from orders.messaging.local import LocalMessageSender
from sqlitebus import ServiceBusEngine, ServiceBusError, load_queue_catalog
from tests.support.sender_contract import Delivered, SenderContract


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


@dataclass
class EngineBed:
    """The contract's view of the local engine: its queue ``orders`` and its clock."""

    sender: LocalMessageSender
    engine: ServiceBusEngine
    clock: ManualClock
    queue: str = "orders"

    def receive(self, count):
        return [Delivered(m.body, m.message_id, m.sequence_number,
                          dict(m.application_properties), m.correlation_id, m.content_type,
                          m.scheduled_enqueue_time)
                for m in self.engine.receive(self.queue, count)]

    def counts(self):
        counts = self.engine.counts(self.queue)
        return counts.active, counts.scheduled

    def now(self):
        return self.clock.now()

    def reach(self, when):
        self.clock.advance(when - self.clock.now())


@pytest.fixture
def bed(sender, engine, clock):
    return EngineBed(sender, engine, clock)


class TestLocalSender(SenderContract):
    SIZE_REFUSAL = "maximum message size"
    BATCH_REFUSAL = "batch limit"


def test_a_message_is_enqueued_at_the_engine_clock(sender, engine, clock):
    sender.send("orders", OutgoingMessage({"n": 1}))
    [msg] = engine.receive("orders", 1)
    assert msg.enqueued_time == clock.now()


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
