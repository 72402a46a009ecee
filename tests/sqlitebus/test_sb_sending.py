from datetime import UTC, datetime, timedelta

import pytest

from sqlitebus import (
    TTL_EXPIRED,
    MessageSizeExceededError,
    MessagingEntityNotFoundError,
    NewMessage,
    ServiceBusEngine,
    open_engine,
)

WINDOW = timedelta(minutes=10)  # duplicateDetectionHistoryTimeWindow in conftest.QUEUES_DOC


def test_duplicate_inside_window_dropped_even_after_completion(engine, clock):
    assert engine.send("work", b"first", message_id="reply-1") is True
    [msg] = engine.receive("work", 1)
    engine.complete("work", msg.lock_token)
    clock.advance(WINDOW - timedelta(seconds=1))
    assert engine.send("work", b"second", message_id="reply-1") is False
    assert engine.counts("work").active == 0
    assert engine.receive("work", 1) == []


def test_first_sent_times_outlive_the_completed_message_until_the_window_ends(engine, clock):
    sent_at = clock.now()
    assert engine.send("work", b"first", message_id="reply-1") is True
    [msg] = engine.receive("work", 1)
    engine.complete("work", msg.lock_token)
    clock.advance(timedelta(seconds=5))
    assert engine.send("work", b"second", message_id="reply-1") is False  # keeps the first
    assert engine.first_sent("work") == {"reply-1": sent_at}
    assert engine.first_sent("other") == {}
    clock.advance(WINDOW)
    engine.send("work", b"x", message_id="reply-2")  # a send prunes the expired history
    assert set(engine.first_sent("work")) == {"reply-2"}


def test_duplicate_accepted_again_after_window(engine, clock):
    assert engine.send("work", b"first", message_id="reply-1") is True
    clock.advance(WINDOW - timedelta(microseconds=1))
    assert engine.send("work", b"dup", message_id="reply-1") is False  # window from first send
    clock.advance(timedelta(microseconds=1))
    assert engine.send("work", b"later", message_id="reply-1") is True
    assert [m.body for m in engine.peek("work", 10)] == [b"first", b"later"]


def test_duplicate_detection_is_per_queue_and_can_be_off(engine):
    assert engine.send("work", b"a", message_id="same") is True
    assert engine.send("other", b"a", message_id="same") is True
    assert engine.send("no-dedup", b"a", message_id="same") is True
    assert engine.send("no-dedup", b"a", message_id="same") is True
    assert engine.counts("no-dedup").active == 2


def test_send_many_is_atomic_and_dedups_within_batch(engine):
    batch = [NewMessage(b"1", message_id="x"), NewMessage(b"2", message_id="x"), NewMessage(b"3")]
    assert engine.send_many("work", batch) == [True, False, True]
    assert [m.body for m in engine.peek("work", 10)] == [b"1", b"3"]
    with pytest.raises(ValueError, match=r"messages\[1\]: must be a NewMessage"):
        engine.send_many("work", [NewMessage(b"4"), b"not a message"])
    assert engine.counts("work").active == 2  # nothing of the failed batch was stored


def test_generated_message_id_is_stable_per_message_object():
    message = NewMessage("body")
    assert len(message.message_id) == 32
    assert NewMessage("body").message_id != message.message_id


def test_scheduled_enqueue_time_is_honoured(engine, clock):
    due = clock.now() + timedelta(minutes=5)
    engine.send("work", b"later", message_id="s-1", scheduled_enqueue_time=due)
    engine.send("work", b"now", message_id="n-1")
    [now_msg] = engine.receive("work", 10)
    assert now_msg.message_id == "n-1"
    counts = engine.counts("work")
    assert (counts.active, counts.scheduled) == (1, 1)
    engine.complete("work", now_msg.lock_token)
    clock.advance(timedelta(minutes=5) - timedelta(microseconds=1))
    assert engine.receive("work", 10) == []
    clock.advance(timedelta(microseconds=1))
    [msg] = engine.receive("work", 10)
    assert msg.message_id == "s-1"
    assert msg.scheduled_enqueue_time == due
    assert msg.enqueued_time == due
    assert msg.expires_at == due + timedelta(days=1)


def test_scheduled_time_in_the_past_is_receivable_now(engine, clock):
    engine.send("work", b"x", scheduled_enqueue_time=clock.now() - timedelta(hours=1))
    [msg] = engine.receive("work", 1)
    assert msg.enqueued_time == clock.now()


def test_expired_message_is_dead_lettered_with_ttl_reason(engine, clock):
    engine.send("work", b"x", message_id="ttl-1", time_to_live=timedelta(minutes=1))
    engine.send("work", b"y", message_id="keep")
    clock.advance(timedelta(minutes=1))
    [msg] = engine.receive("work", 10)
    assert msg.message_id == "keep"
    [dead] = engine.peek("work/$deadletterqueue", 10)
    assert dead.message_id == "ttl-1"
    assert dead.dead_letter_reason == TTL_EXPIRED == "TTLExpiredException"
    assert dead.delivery_count == 0


def test_expired_message_discarded_when_queue_does_not_dead_letter_on_expiry(engine, clock):
    engine.send("expiry-discards", b"x", time_to_live=timedelta(seconds=10))
    clock.advance(timedelta(seconds=10))
    assert engine.receive("expiry-discards", 10) == []
    counts = engine.counts("expiry-discards")
    assert (counts.active, counts.dead_letter) == (0, 0)


def test_message_ttl_is_capped_at_queue_default(engine):
    engine.send("work", b"x", time_to_live=timedelta(days=30))
    [msg] = engine.peek("work", 1)
    assert msg.time_to_live == timedelta(days=1)


def test_sweep_expires_without_a_receiver(engine, clock):
    engine.send("work", b"x", time_to_live=timedelta(seconds=10))
    engine.send("work", b"y")
    assert engine.sweep() == 0
    clock.advance(timedelta(seconds=10))
    assert engine.sweep("work") == 1
    counts = engine.counts("work")
    assert (counts.active, counts.dead_letter) == (1, 1)


def test_unknown_queue_raises_entity_not_found_naming_it(engine):
    with pytest.raises(MessagingEntityNotFoundError, match="queue 'ordres' not found") as info:
        engine.send("ordres", b"x")
    assert info.value.queue == "ordres"
    assert "infra/queues.json" in str(info.value)
    with pytest.raises(MessagingEntityNotFoundError):
        engine.receive("ordres", 1)
    with pytest.raises(MessagingEntityNotFoundError):
        engine.counts("replies-")


def test_client_reply_queue_created_on_demand(engine):
    reply_queue = engine.catalog.reply_queue_name("shop-7")
    assert reply_queue not in [q.name for q in engine.list_queues()]
    engine.send(reply_queue, b'{"status": "received"}', correlation_id="order-1")
    listed = {q.name: q.counts.active for q in engine.list_queues()}
    assert listed["replies-shop-7"] == 1
    assert listed["work"] == 0
    [msg] = engine.receive("replies-shop-7", 1)
    assert msg.correlation_id == "order-1"


def test_queue_names_are_case_insensitive(engine):
    engine.send("WORK", b"x")
    [msg] = engine.receive("Work", 1)
    assert msg.queue == "work"


def test_cannot_send_to_dead_letter_subqueue(engine):
    with pytest.raises(ValueError, match="cannot send to a dead-letter subqueue"):
        engine.send("work/$deadletterqueue", b"x")


def test_body_and_properties_round_trip(engine):
    props = {"s": "text", "i": 3, "f": 1.5, "b": True, "n": None}
    engine.send("work", "grüße", application_properties=props, content_type="text/plain")
    [msg] = engine.receive("work", 1)
    assert msg.text == "grüße"
    assert msg.application_properties == props
    assert msg.content_type == "text/plain"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"scheduled_enqueue_time": datetime(2030, 1, 1)}, "scheduled_enqueue_time"),
        ({"time_to_live": timedelta(0)}, "time_to_live"),
        ({"message_id": ""}, "message_id"),
        ({"message_id": "x" * 129}, "message_id"),
        ({"application_properties": {"when": datetime(2030, 1, 1, tzinfo=UTC)}}, "when"),
        ({"correlation_id": 5}, "correlation_id"),
    ],
)
def test_bad_fields_are_named(engine, kwargs, field):
    with pytest.raises(ValueError, match=field):
        engine.send("work", b"x", **kwargs)


def test_message_size_limit(engine):
    with pytest.raises(MessageSizeExceededError, match="262144"):
        engine.send("work", b"x" * (256 * 1024 + 1))


def test_messages_survive_reopening_the_file(engine, catalog, clock):
    engine.send("work", b"durable", message_id="d-1")
    engine.close()
    reopened = ServiceBusEngine(engine.path, catalog=catalog, clock=clock)
    try:
        [msg] = reopened.receive("work", 1)
        assert msg.message_id == "d-1"
        assert reopened.send("work", b"dup", message_id="d-1") is False
    finally:
        reopened.close()


def test_open_engine_uses_the_data_dir_file(tmp_path, catalog, clock):
    with open_engine(tmp_path / "host-data", catalog=catalog, clock=clock) as eng:
        assert eng.path == tmp_path / "host-data" / "servicebus.sqlite"
        eng.send("work", b"x", message_id="o-1")
    with open_engine(tmp_path / "host-data", catalog=catalog, clock=clock) as eng:
        assert [m.message_id for m in eng.peek("work", 5)] == ["o-1"]


def test_history_is_pruned_at_most_once_a_second_and_the_window_stays_exact(engine, clock):
    deletes = []
    engine._conn.set_trace_callback(
        lambda sql: deletes.append(sql) if sql.startswith("DELETE FROM duplicate_history")
        else None)
    assert engine.send("work", b"a", message_id="a") is True  # prunes
    clock.advance(WINDOW - timedelta(milliseconds=500))
    assert engine.send("work", b"b", message_id="b") is True  # prunes; "a" is still inside
    assert engine.send("work", b"a2", message_id="a") is False
    clock.advance(timedelta(milliseconds=600))  # "a" is past its window, not yet pruned
    assert engine.send("work", b"a3", message_id="a") is True
    assert engine.send("work", b"b2", message_id="b") is False
    assert len(deletes) == 2
    assert [m.body for m in engine.peek("work", 10)] == [b"a", b"b", b"a3"]
