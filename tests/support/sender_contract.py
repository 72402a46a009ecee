"""What every :class:`~orders.messaging.MessageSender` adapter must do, whichever broker.

The local host's sender (over the Service Bus stand-in engine) and the Azure sender (over
the real SDK and AMQP) must behave alike (L1: the local host answers as Azure does).
A test module subclasses :class:`SenderContract` in a class named ``Test...`` and gives it
a ``bed`` fixture: a :class:`SenderBed` on its broker. The adapter's own cases (its error
mapping, its connection handling) stay in that module.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Protocol

import pytest

from orders.errors import OrderServiceError
from orders.messaging import MessageRejectedError, OutgoingMessage, QueueNotFoundError
from orders.messaging.port import MessageSender


@dataclass(frozen=True)
class Delivered:
    """A received message, as far as the contract looks at it."""

    body: bytes
    message_id: str | None
    sequence_number: int
    application_properties: dict[str, Any]
    correlation_id: str | None
    content_type: str | None
    scheduled_enqueue_time: datetime | None


class SenderBed(Protocol):
    """A sender under test, one empty queue of its broker, and the broker's view of it."""

    sender: MessageSender
    queue: str

    def receive(self, count: int) -> list[Delivered]:
        """Receive (waiting for them if the broker is remote) up to ``count`` messages."""
        ...

    def counts(self) -> tuple[int, int]:
        """Return the queue's active and scheduled message counts."""
        ...

    def now(self) -> datetime:
        """Return the broker's time."""
        ...

    def reach(self, when: datetime) -> None:
        """Let the broker's time reach ``when`` (a remote broker's clock runs by itself)."""
        ...


class SenderContract:
    """The cases every sender passes; subclasses name what their broker's refusals say."""

    SIZE_REFUSAL: ClassVar[str]
    """Text of the refusal of one message over the size limit."""
    BATCH_REFUSAL: ClassVar[str | None] = None
    """Text of the refusal of a batch over the limit, where the adapter words it."""

    def test_send_carries_every_field(self, bed: SenderBed) -> None:
        bed.sender.send(bed.queue, OutgoingMessage(
            {"orderId": "o-1", "step": "charge"},
            message_id="o-1/charge/1",
            application_properties={"orderId": "o-1", "attempt": 2},
            correlation_id="order-o-1-attempt-2",
        ))
        [message] = bed.receive(1)
        assert message.body == b'{"orderId":"o-1","step":"charge"}'
        assert message.message_id == "o-1/charge/1"
        assert message.application_properties == {"orderId": "o-1", "attempt": 2}
        assert message.correlation_id == "order-o-1-attempt-2"
        assert message.content_type == "application/json"

    def test_a_resend_with_the_same_message_id_is_dropped(self, bed: SenderBed) -> None:
        # An activity re-run resends its agent request with the same MessageId (A4, X2).
        for _ in range(3):
            bed.sender.send(bed.queue, OutgoingMessage({"orderId": "o-2"},
                                                       message_id="o-2/ship/1"))
        assert bed.counts() == (1, 0)
        assert [m.message_id for m in bed.receive(1)] == ["o-2/ship/1"]

    def test_a_scheduled_message_waits_for_its_time(self, bed: SenderBed) -> None:
        # Whole seconds: the wire carries the scheduled time in milliseconds.
        due = (bed.now() + timedelta(seconds=2)).replace(microsecond=0)
        bed.sender.send(bed.queue, OutgoingMessage({"retry": 1}, message_id="later",
                                                   scheduled_enqueue_time=due))
        assert bed.counts() == (0, 1)
        bed.reach(due)
        [message] = bed.receive(1)
        assert message.message_id == "later"
        assert message.scheduled_enqueue_time == due
        assert bed.now() >= due

    def test_send_many_is_one_batch_in_order(self, bed: SenderBed) -> None:
        bed.sender.send_many(bed.queue, [])
        assert bed.counts() == (0, 0)
        bed.sender.send_many(bed.queue, [OutgoingMessage({"n": n}, message_id=f"m-{n}")
                                         for n in range(5)])
        received = bed.receive(5)
        assert [m.message_id for m in received] == [f"m-{n}" for n in range(5)]
        assert [m.body for m in received] == [b'{"n":%d}' % n for n in range(5)]
        numbers = [m.sequence_number for m in received]
        assert numbers == sorted(numbers)

    def test_a_message_over_the_size_limit_is_rejected(self, bed: SenderBed) -> None:
        with pytest.raises(MessageRejectedError, match=self.SIZE_REFUSAL) as info:
            bed.sender.send(bed.queue, OutgoingMessage({"blob": "x" * 300_000}))
        assert info.value.retryable is False
        assert bed.counts() == (0, 0)

    def test_a_batch_over_the_limit_is_refused_and_nothing_sent(self, bed: SenderBed) -> None:
        # Each message fits (256 KB), the two together do not.
        with pytest.raises(MessageRejectedError, match=self.BATCH_REFUSAL) as info:
            bed.sender.send_many(bed.queue, [OutgoingMessage({"blob": "x" * 150_000})
                                             for _ in range(2)])
        assert info.value.retryable is False
        assert bed.counts() == (0, 0)

    def test_an_unknown_queue_is_queue_not_found_naming_it(self, bed: SenderBed) -> None:
        with pytest.raises(QueueNotFoundError, match="queue 'no-such-queue' not found") as info:
            bed.sender.send("no-such-queue", OutgoingMessage({}))
        assert info.value.queue == "no-such-queue"
        assert isinstance(info.value, OrderServiceError)
        assert info.value.retryable is False
        assert info.value.retry_after is None
