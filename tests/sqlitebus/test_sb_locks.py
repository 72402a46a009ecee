from datetime import timedelta

import pytest

from sqlitebus import (
    MAX_DELIVERY_COUNT_EXCEEDED,
    MessageLockLostError,
    ServiceBusError,
)

LOCK = timedelta(seconds=30)  # lockDuration in conftest.QUEUES_DOC


def test_receive_locks_and_hides_message(engine, clock):
    engine.send("work", b"payload", message_id="m-1", application_properties={"order": "o-1"})
    [msg] = engine.receive("work", 10, "worker-a")
    assert msg.body == b"payload"
    assert msg.message_id == "m-1"
    assert msg.delivery_count == 1
    assert msg.application_properties == {"order": "o-1"}
    assert msg.enqueued_time == clock.now()
    assert msg.locked_until == clock.now() + LOCK
    assert msg.locked_by == "worker-a"
    assert msg.lock_token
    assert engine.receive("work", 10, "worker-b") == []
    counts = engine.counts("work")
    assert (counts.active, counts.locked, counts.scheduled, counts.dead_letter) == (1, 1, 0, 0)


def test_lock_expiry_redelivers_with_delivery_count_2(engine, clock):
    engine.send("work", b"x", message_id="m-1")
    [first] = engine.receive("work", 1, "killed-worker")
    clock.advance(LOCK - timedelta(microseconds=1))
    assert engine.receive("work", 1, "worker-b") == []
    clock.advance(timedelta(microseconds=1))
    [second] = engine.receive("work", 1, "worker-b")
    assert second.message_id == "m-1"
    assert second.sequence_number == first.sequence_number
    assert second.delivery_count == 2
    assert second.lock_token != first.lock_token
    with pytest.raises(MessageLockLostError):
        engine.complete("work", first.lock_token)
    engine.complete("work", second.lock_token)
    assert engine.counts("work").active == 0


def test_past_max_delivery_count_goes_to_dead_letter(engine, clock):
    engine.send("work", b"poison", message_id="poison-1")
    for attempt in (1, 2, 3):  # maxDeliveryCount = 3
        [msg] = engine.receive("work", 1)
        assert msg.delivery_count == attempt
        clock.advance(LOCK)
    assert engine.receive("work", 1) == []
    counts = engine.counts("work")
    assert (counts.active, counts.dead_letter) == (0, 1)
    [dead] = engine.peek("work", 5, dead_letter=True)
    assert dead.message_id == "poison-1"
    assert dead.dead_letter_reason == MAX_DELIVERY_COUNT_EXCEEDED == "MaxDeliveryCountExceeded"
    assert dead.dead_letter_error_description == (
        "Message could not be consumed after 3 delivery attempts."
    )
    assert dead.delivery_count == 3
    assert dead.entity_path == "work/$deadletterqueue"


def test_abandon_makes_message_available_at_once_with_count_kept(engine):
    engine.send("work", b"x", message_id="m-1")
    [msg] = engine.receive("work", 1)
    engine.abandon("work", msg.lock_token)
    [again] = engine.receive("work", 1)
    assert again.delivery_count == 2
    assert again.sequence_number == msg.sequence_number
    with pytest.raises(MessageLockLostError):
        engine.abandon("work", msg.lock_token)


def test_abandon_of_last_allowed_delivery_dead_letters_immediately(engine):
    engine.send("work", b"x", message_id="m-1")
    for _ in range(2):
        [msg] = engine.receive("work", 1)
        engine.abandon("work", msg.lock_token)
    assert engine.counts("work").dead_letter == 0
    [msg] = engine.receive("work", 1)
    assert msg.delivery_count == 3
    engine.abandon("work", msg.lock_token)
    assert engine.counts("work").dead_letter == 1
    assert engine.counts("work").active == 0


def test_renew_lock_extends_from_now(engine, clock):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    clock.advance(timedelta(seconds=20))
    until = engine.renew_lock("work", msg.lock_token)
    assert until == clock.now() + LOCK
    clock.advance(timedelta(seconds=20))  # 40 s after receive, 20 s after renew
    assert engine.receive("work", 1) == []
    engine.complete("work", msg.lock_token)
    assert engine.counts("work").active == 0


def test_operations_with_expired_lock_raise_lock_lost(engine, clock):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    clock.advance(LOCK)
    for operation in (engine.complete, engine.abandon, engine.renew_lock, engine.dead_letter):
        with pytest.raises(MessageLockLostError, match="lock expired at 2030-01-01T00:00:30"):
            operation("work", msg.lock_token)
    # The message itself is intact and is redelivered.
    [again] = engine.receive("work", 1)
    assert again.delivery_count == 2


def test_settled_or_unknown_token_raises_lock_lost(engine):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    engine.complete("work", msg.lock_token)
    with pytest.raises(MessageLockLostError, match="settled already"):
        engine.complete("work", msg.lock_token)
    with pytest.raises(MessageLockLostError):
        engine.renew_lock("work", "00000000-0000-0000-0000-000000000000")


def test_token_from_another_queue_raises_lock_lost(engine):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    with pytest.raises(MessageLockLostError, match="held on 'work', not 'other'"):
        engine.complete("other", msg.lock_token)
    engine.complete("work", msg.lock_token)


def test_explicit_dead_letter_keeps_reason_and_description(engine):
    engine.send("work", b'{"order": 1}', message_id="order-1", correlation_id="corr-1")
    [msg] = engine.receive("work", 1)
    engine.dead_letter("work", msg.lock_token, "ConflictingOrderData", "OrderID 1 differs")
    assert engine.receive("work", 1) == []
    [dead] = engine.receive("work/$deadletterqueue", 1, "operator")
    assert dead.from_dead_letter_queue is True
    assert dead.message_id == "order-1"
    assert dead.correlation_id == "corr-1"
    assert dead.sequence_number == msg.sequence_number
    assert dead.dead_letter_reason == "ConflictingOrderData"
    assert dead.dead_letter_error_description == "OrderID 1 differs"
    assert dead.json() == {"order": 1}
    with pytest.raises(ServiceBusError, match="cannot be dead-lettered again"):
        engine.dead_letter(dead.entity_path, dead.lock_token, "again")
    with pytest.raises(MessageLockLostError, match="held on 'work/\\$deadletterqueue'"):
        engine.complete("work", dead.lock_token)
    engine.complete(dead.entity_path, dead.lock_token)
    assert engine.counts("work").dead_letter == 0


def test_dead_letter_queue_via_flag_and_abandon_there(engine):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    engine.dead_letter("work", msg.lock_token)
    [dead] = engine.receive("work", 1, dead_letter=True)
    assert dead.dead_letter_reason is None
    engine.abandon("work/$deadletterqueue", dead.lock_token)
    [dead_again] = engine.receive("work/$deadletterqueue", 1)
    assert dead_again.sequence_number == msg.sequence_number


def test_dead_letter_rejects_non_string_reason(engine):
    engine.send("work", b"x")
    [msg] = engine.receive("work", 1)
    with pytest.raises(ValueError, match="reason: must be a string"):
        engine.dead_letter("work", msg.lock_token, reason=42)


def test_fifo_by_sequence_number_and_batch(engine):
    for i in range(5):
        engine.send("work", f"body-{i}", message_id=f"m-{i}")
    batch = engine.receive("work", 3)
    assert [m.message_id for m in batch] == ["m-0", "m-1", "m-2"]
    assert [m.sequence_number for m in batch] == sorted(m.sequence_number for m in batch)
    assert len({m.lock_token for m in batch}) == 3
    engine.abandon("work", batch[1].lock_token)
    assert [m.message_id for m in engine.receive("work", 10)] == ["m-1", "m-3", "m-4"]


def test_peek_neither_locks_nor_counts_a_delivery(engine):
    engine.send("work", b"a", message_id="a")
    engine.send("work", b"b", message_id="b")
    peeked = engine.peek("work", 10)
    assert [(m.message_id, m.delivery_count, m.lock_token) for m in peeked] == [
        ("a", 0, None),
        ("b", 0, None),
    ]
    [msg] = engine.receive("work", 1)
    assert msg.delivery_count == 1
    [a, b] = engine.peek("work", 10)
    assert a.lock_token is None and a.locked_until is not None  # locked, token not revealed
    assert engine.peek("work", 10, from_sequence_number=b.sequence_number) == [b]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_receive_rejects_bad_max_count(engine, bad):
    with pytest.raises(ValueError, match="max_count"):
        engine.receive("work", bad)
