"""Statements per operation: a receive and a settlement take one statement on ``messages``.

The broker rules and peek-lock stay as before (tests/sqlitebus/test_sb_locks.py); these
tests pin how many trips they take, and that a receive reaching rule-breaking messages
still moves exactly those it reached.
"""

import re
from datetime import timedelta

import pytest

from sqlitebus import MAX_DELIVERY_COUNT_EXCEEDED, TTL_EXPIRED, MessageLockLostError
from sqlitebus.models import NewMessage
from sqlitekit.batches import ROWS_PER_STATEMENT

LOCK = timedelta(seconds=30)  # lockDuration in conftest.QUEUES_DOC


@pytest.fixture
def on_messages(engine):
    """The statements the engine's connection runs on the messages table, from now on."""
    seen: list[str] = []
    engine._conn.set_trace_callback(
        lambda sql: seen.append(sql) if re.search(r"\bmessages\b", sql) else None)
    return seen


def _send(engine, *ids):
    for message_id in ids:
        engine.send("work", message_id.encode(), message_id=message_id)


@pytest.mark.parametrize(("queued", "max_count"), [(1, 1), (3, 3), (1, 16), (3, 2)])
def test_a_receive_locks_its_messages_with_one_statement(engine, on_messages, queued,
                                                         max_count):
    # Before: a SELECT of the candidates, an UPDATE per message, and a SELECT more when
    # fewer than max_count were queued.
    _send(engine, *(f"m{n}" for n in range(queued)))
    on_messages.clear()
    got = engine.receive("work", max_count, "worker-a", seen_ready=True)
    assert [m.message_id for m in got] == [f"m{n}" for n in range(min(queued, max_count))]
    assert {m.delivery_count for m in got} == {1}
    assert len({m.lock_token for m in got}) == len(got)
    assert {m.locked_by for m in got} == {"worker-a"}
    assert len(on_messages) == 1 and on_messages[0].split()[:2] == ["UPDATE", "messages"]


@pytest.mark.parametrize("settle", ["complete", "renew_lock"])
def test_a_settlement_is_one_statement_and_a_lost_lock_still_says_why(engine, clock,
                                                                       on_messages, settle):
    # Before: a SELECT of the message holding the token, then its DELETE or UPDATE.
    _send(engine, "m0")
    [held] = engine.receive("work", 1)
    on_messages.clear()
    getattr(engine, settle)("work", held.lock_token)
    assert len(on_messages) == 1
    if settle == "renew_lock":
        clock.advance(LOCK)
        with pytest.raises(MessageLockLostError, match="lock expired at"):
            engine.complete("work", held.lock_token)
        return
    with pytest.raises(MessageLockLostError, match="no message holds this lock"):
        engine.complete("work", held.lock_token)


def test_a_lock_held_on_another_queue_is_refused_and_left_alone(engine):
    _send(engine, "m0")
    [held] = engine.receive("work", 1)
    with pytest.raises(MessageLockLostError, match="lock is held on 'work', not 'other'"):
        engine.complete("other", held.lock_token)
    with pytest.raises(MessageLockLostError, match="not 'work/\\$deadletterqueue'"):
        engine.renew_lock("work/$deadletterqueue", held.lock_token)
    engine.complete("work", held.lock_token)
    assert engine.counts("work").active == 0


@pytest.mark.parametrize("queue", ["work", "expiry-discards"])
@pytest.mark.parametrize("max_count", [1, 2, 3, 5])
def test_a_receive_moves_exactly_the_rule_breaking_messages_it_reaches(engine, clock, queue,
                                                                        max_count):
    # Queued, oldest first: p (delivered maxDeliveryCount = 3 times), ok1, e (expired), ok2,
    # ok3. A receive walks them in order and stops at max_count locked messages.
    engine.send(queue, b"p", message_id="p")
    for _ in range(3):
        assert [m.message_id for m in engine.receive(queue, 1)] == ["p"]
        clock.advance(LOCK)
    engine.send(queue, b"ok1", message_id="ok1")
    engine.send(queue, b"e", message_id="e", time_to_live=timedelta(seconds=1))
    engine.send(queue, b"ok2", message_id="ok2")
    engine.send(queue, b"ok3", message_id="ok3")
    clock.advance(timedelta(seconds=1))
    walk = ["p", "ok1", "e", "ok2", "ok3"]
    reached = walk[: {1: 2, 2: 4, 3: 5, 5: 5}[max_count]]
    got = engine.receive(queue, max_count, "worker-a")
    assert [m.message_id for m in got] == [m for m in reached if m.startswith("ok")]
    dead = {m.message_id: m.dead_letter_reason
            for m in engine.peek(queue, 10, dead_letter=True)}
    expected = {"p": MAX_DELIVERY_COUNT_EXCEEDED}
    if "e" in reached and queue == "work":  # the other queue discards expired messages
        expected["e"] = TTL_EXPIRED
    assert dead == expected
    active = [m.message_id for m in engine.peek(queue, 10)]
    assert active == [m for m in walk[1:] if m != "e" or "e" not in reached]
    assert all(m.delivery_count == 1 for m in got)


@pytest.mark.parametrize("queue", ["work", "no-dedup"])
def test_a_batch_is_sent_with_one_history_upsert_and_one_insert(engine, queue):
    # Before: per message, an upsert of the duplicate history and an INSERT of the message.
    engine.send(queue, b"old", message_id="old")
    seen: list[str] = []
    engine._conn.set_trace_callback(seen.append)
    batch = [NewMessage(body, message_id=message_id) for body, message_id in
             [(b"a", "a"), (b"old2", "old"), (b"b", "b"), (b"a2", "a"), (b"c", "c")]]
    accepted = engine.send_many(queue, batch)
    dedup = queue == "work"
    assert accepted == ([True, False, True, False, True] if dedup else [True] * 5)
    first = [s.split()[:3] for s in seen]
    assert first.count(["INSERT", "INTO", "duplicate_history"]) == int(dedup)
    assert first.count(["INSERT", "INTO", "messages"]) == 1
    stored = engine.peek(queue, 10)
    assert [m.body for m in stored] == (
        [b"old", b"a", b"b", b"c"] if dedup else [b"old", b"a", b"old2", b"b", b"a2", b"c"])
    assert [m.sequence_number for m in stored] == sorted(m.sequence_number for m in stored)


def test_a_batch_larger_than_a_statement_is_chunked_and_kept_in_order(engine):
    count = ROWS_PER_STATEMENT + 44
    seen: list[str] = []
    engine._conn.set_trace_callback(seen.append)
    assert engine.send_many("work", [NewMessage(str(n), message_id=f"m{n}")
                                     for n in range(count)]) == [True] * count
    inserts = [s for s in seen if s.startswith("INSERT INTO messages")]
    assert len(inserts) == 2
    assert [m.body for m in engine.peek("work", count)] == [str(n).encode() for n in range(count)]
    assert engine.send_many("work", [NewMessage(b"x", message_id=f"m{count - 1}")]) == [False]
    assert len(engine.first_sent("work")) == count
