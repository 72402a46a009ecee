"""The client's reply receiver (client/receivers.py AzureReplyReceiver) over the real SDK.

Peek-lock receive, complete, dead-letter with reason and description, and a lock the broker
dropped, all through AMQP 1.0 against the stand-in; then the whole watcher
(client.watch.watch) on top of it, as `python -m client watch --backend servicebus` runs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from azure.servicebus import ServiceBusMessage

from client.receivers import AzureReplyReceiver
from client.watch import INVALID_STATUS_REASON, LockLostError, watch
from orders.models.messages import StatusKind, StatusMessage

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def put(stand_in, queue, *bodies):
    with stand_in.token_client() as client, client.get_queue_sender(queue) as sender:
        sender.send_messages([ServiceBusMessage(body, message_id=f"id-{i}")
                              for i, body in enumerate(bodies)])


def status(order_id, kind, second=0, reason=None):
    return StatusMessage(order_id=order_id, status=kind, at=T0 + timedelta(seconds=second),
                         reason=reason).model_dump_json()


@pytest.fixture
def receiver(stand_in, queue):
    adapter = AzureReplyReceiver("unused.servicebus.windows.net", queue, max_wait_time_s=1,
                                 client=stand_in.token_client(retry_total=0))
    yield adapter
    adapter.close()


def receive(receiver, expect):
    found = []
    while len(found) < expect:
        batch = receiver.receive(expect - len(found))
        if not batch:
            break
        found += batch
    return found


def dead_letters(stand_in, queue):
    with stand_in.token_client() as client, \
            client.get_queue_receiver(queue, sub_queue="deadletter") as dlq:
        found = dlq.receive_messages(max_message_count=10, max_wait_time=2)
        for message in found:
            dlq.complete_message(message)
        return found


def test_receive_gives_body_id_and_counts_this_delivery(stand_in, queue, receiver):
    put(stand_in, queue, b'{"orderId": "A"}')
    (message,) = receive(receiver, 1)
    assert (message.body, message.message_id) == (b'{"orderId": "A"}', "id-0")
    # The wire says 0 earlier deliveries; the port counts this one too.
    assert message.delivery_count == 1
    receiver.complete(message)


def test_a_redelivery_counts_two(stand_in, queue, receiver):
    put(stand_in, queue, b"again")
    (first,) = receive(receiver, 1)
    assert stand_in.expire_locks(queue) == 1
    (second,) = receive(receiver, 1)
    assert (second.message_id, second.delivery_count) == (first.message_id, 2)
    receiver.complete(second)


def test_complete_removes_the_message(stand_in, queue, receiver):
    put(stand_in, queue, b"one", b"two")
    messages = receive(receiver, 2)
    for message in messages:
        receiver.complete(message)
    assert stand_in.expire_locks(queue) == 0  # nothing left locked
    assert receiver.receive(10) == []


def test_dead_letter_keeps_reason_and_description(stand_in, queue, receiver):
    put(stand_in, queue, b"not a status")
    (message,) = receive(receiver, 1)
    receiver.dead_letter(message, INVALID_STATUS_REASON, "body: not valid JSON")
    (dead,) = dead_letters(stand_in, queue)
    assert b"".join(dead.body) == b"not a status"
    assert (dead.dead_letter_reason, dead.dead_letter_error_description) == (
        INVALID_STATUS_REASON, "body: not valid JSON")


def test_settling_after_the_broker_dropped_the_lock_is_lock_lost(stand_in, queue, receiver):
    put(stand_in, queue, b"slow", b"slower")
    first, second = receive(receiver, 2)
    assert stand_in.expire_locks(queue) == 2  # the client still believes it holds the locks
    with pytest.raises(LockLostError, match="lock"):
        receiver.complete(first)
    with pytest.raises(LockLostError, match="lock"):
        receiver.dead_letter(second, "r", "d")


def test_watch_over_the_wire_records_statuses_and_dead_letters_invalid(stand_in, queue,
                                                                       receiver):
    put(stand_in, queue,
        status("A", StatusKind.REQUEST_RECEIVED, 1),
        status("A", StatusKind.ORDER_COMPLETED, 5),
        "not json at all",
        status("B", StatusKind.ORDER_FAILED, 3, reason="payment declined"))
    result = watch(receiver, 2, timedelta(seconds=30), max_count=10,
                   poll_interval=timedelta(milliseconds=100))
    assert not result.timed_out
    assert result.dead_lettered == 1
    assert {k: (s.status, s.reason) for k, s in result.statuses.items()} == {
        "A": (StatusKind.ORDER_COMPLETED, None),
        "B": (StatusKind.ORDER_FAILED, "payment declined")}
    (dead,) = dead_letters(stand_in, queue)
    assert dead.dead_letter_reason == INVALID_STATUS_REASON
    assert receiver.receive(10) == []  # every valid one was completed
