"""Watching a client's reply queue until its orders reach a terminal status (SPEC S8).

Why: a client learns the outcome of its orders only from status messages on its private
reply queue. The watcher receives them in peek-lock mode, records each order's latest
status and completes the message only after recording it, so a crash between the two
redelivers the message and recording it again changes nothing (at-least-once delivery).
A message that is not a valid :class:`~orders.models.messages.StatusMessage` can never
become valid by retrying, so it is dead-lettered with the reason instead of being
abandoned until ``maxDeliveryCount`` (documented Service Bus practice for poison
messages).

A reply queue is the client's inbox: each status is delivered to one receiver, so one
watcher consumes it (a second one that completed messages would take statuses from the
first). :class:`PeekingReceiver` watches without consuming: it browses the queue (Service
Bus peek: no lock, no delivery count, nothing settled), so any number of watchers see every
status still in the queue, old ones included.

An order's wait ends at a terminal status (:data:`TERMINAL_STATUS_KINDS`) or at a
``ChangeRefused`` answer (:data:`ANSWER_KINDS`): the resent order was refused, and the
stored order's own outcome may have been delivered long before.

Service Bus does not order messages without sessions, so a late ``RequestReceived`` must
not hide an ``OrderCompleted``: a terminal status (:data:`TERMINAL_STATUS_KINDS`) always
beats a non-terminal one, and between two of the same class the later ``at`` wins.

The receiver is a small port (:class:`ReplyReceiver`); adapters live in
:mod:`client.receivers`. Time is injected (a :class:`~clocks.Clock` and a
``sleep``), so tests run the timeout without waiting.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import ValidationError

from client.rejects import problems_from
from clocks import Clock, SystemClock
from orders.models.messages import TERMINAL_STATUS_KINDS, StatusKind, StatusMessage

INVALID_STATUS_REASON = "InvalidStatusMessage"
"""DeadLetterReason of reply queue messages that are not valid status messages."""

ANSWER_KINDS = TERMINAL_STATUS_KINDS | {StatusKind.CHANGE_REFUSED}
"""Kinds that end the wait for an order: its outcome, or the refusal of a changed resend."""

MAX_DESCRIPTION_CHARS = 1000
"""Longest DeadLetterErrorDescription written (keeps the message under its size limit)."""


class LockLostError(Exception):
    """Settling a message failed because its peek-lock was lost (expired or superseded).

    Not an error of the watcher: the broker redelivers the message, and recording it
    again is idempotent.
    """


@dataclass(frozen=True)
class ReplyMessage:
    """A peek-locked message from the reply queue.

    Attributes
    ----------
    body : bytes
        Payload.
    message_id : str
        MessageId.
    delivery_count : int
        Deliveries so far, including this one.
    handle : Any
        What the adapter needs to settle it (lock token or SDK message).
    enqueued_time : datetime or None
        When the broker enqueued it (``EnqueuedTimeUtc``), if the adapter knows; the
        demo's latency runs to the enqueued time of an order's terminal status.
    """

    body: bytes
    message_id: str
    delivery_count: int
    handle: Any = field(repr=False)
    enqueued_time: datetime | None = None
    sequence_number: int | None = None
    """The broker's SequenceNumber, where the adapter knows it (browsing needs it)."""


class ReplyReceiver(Protocol):
    """Peek-lock receiver of one reply queue."""

    def receive(self, max_count: int) -> Sequence[ReplyMessage]:
        """Receive up to ``max_count`` messages, locked; empty when none is ready."""
        ...

    def complete(self, message: ReplyMessage) -> None:
        """Remove a message; raise :class:`LockLostError` if its lock is gone."""
        ...

    def dead_letter(self, message: ReplyMessage, reason: str, description: str) -> None:
        """Move a message to the dead-letter subqueue; :class:`LockLostError` as above."""
        ...


class PeekingReceiver:
    """A :class:`ReplyReceiver` that browses instead of receiving: watching consumes nothing.

    Each :meth:`receive` peeks the next messages after the last one seen, from the first
    message in the queue on; :meth:`complete` and :meth:`dead_letter` do nothing (a peeked
    message has no lock; an invalid one stays for the consuming receiver to dead-letter).

    Parameters
    ----------
    peek : callable
        ``peek(from_sequence_number, max_count)`` returning messages with their
        ``sequence_number``, in sequence order (Service Bus peek / browse).
    """

    settles = False
    """Read by :func:`watch`: messages are left in the queue."""

    def __init__(self, peek: Callable[[int, int], Sequence[ReplyMessage]]) -> None:
        self._peek = peek
        self._next = 0

    def receive(self, max_count: int) -> Sequence[ReplyMessage]:
        """Peek up to ``max_count`` messages after those already returned."""
        batch = self._peek(self._next, max_count)
        if batch:
            last = batch[-1].sequence_number
            if last is None:
                raise ValueError("sequence_number: a peeked message must carry one")
            self._next = last + 1
        return batch

    def complete(self, message: ReplyMessage) -> None:
        """Leave the message in the queue (browsing settles nothing)."""

    def dead_letter(self, message: ReplyMessage, reason: str, description: str) -> None:
        """Leave the message in the queue (browsing settles nothing)."""


@dataclass(frozen=True)
class OrderStatus:
    """The latest status recorded for one order.

    ``enqueued_time`` is the broker's enqueued time of the message that carried it (None
    when the receiver does not report one).
    """

    order_id: str
    status: StatusKind
    at: datetime
    reason: str | None = None
    enqueued_time: datetime | None = None

    @property
    def terminal(self) -> bool:
        """True if the client hears nothing more about the order."""
        return self.status in TERMINAL_STATUS_KINDS

    def _rank(self) -> tuple[bool, datetime]:
        return self.terminal, self.at


@dataclass(frozen=True)
class WatchProgress:
    """Where a watch stands, passed to ``on_progress`` after every received batch."""

    terminal: int
    """Orders whose wait ended: terminal, or answered ``ChangeRefused`` (ANSWER_KINDS)."""
    expect: int
    received: int
    dead_lettered: int


@dataclass
class WatchResult:
    """Outcome of :func:`watch`.

    Attributes
    ----------
    statuses : dict of str to OrderStatus
        Final recorded status per OrderID.
    expect : int
        Terminal orders waited for.
    received : int
        Messages received (including dead-lettered and redelivered ones).
    dead_lettered : int
        Invalid messages moved to the dead-letter subqueue.
    invalid : int
        Invalid messages received, dead-lettered or (browsing) left in the queue.
    lock_lost : int
        Settlements that failed on a lost lock (those messages come back).
    timed_out : bool
        True if the timeout passed before the wait of ``expect`` orders ended.
    answered : set of str
        OrderIDs whose wait ended (a status of :data:`ANSWER_KINDS` arrived).
    """

    statuses: dict[str, OrderStatus]
    expect: int
    received: int = 0
    dead_lettered: int = 0
    invalid: int = 0
    lock_lost: int = 0
    timed_out: bool = False
    answered: set[str] = field(default_factory=set)

    @property
    def terminal(self) -> int:
        """Orders whose final status is terminal."""
        return sum(1 for status in self.statuses.values() if status.terminal)

    def counts(self) -> dict[StatusKind, int]:
        """Return the number of orders per final status, most frequent first."""
        return dict(Counter(s.status for s in self.statuses.values()).most_common())


def watch(
    receiver: ReplyReceiver,
    expect: int,
    timeout: timedelta,
    *,
    clock: Clock | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_progress: Callable[[WatchProgress], None] | None = None,
    poll_interval: timedelta = timedelta(milliseconds=500),
    max_count: int = 100,
) -> WatchResult:
    """Receive status messages until ``expect`` orders are answered or ``timeout`` passes.

    An order is answered by a terminal status or by ``ChangeRefused`` (:data:`ANSWER_KINDS`).
    Each received batch is processed completely (a stop never leaves a message locked):
    valid messages are recorded, then completed; invalid ones are dead-lettered with
    reason :data:`INVALID_STATUS_REASON` and a description naming field and rule. With a
    receiver whose ``settles`` is False (:class:`PeekingReceiver`) nothing is settled.

    Parameters
    ----------
    receiver : ReplyReceiver
        Peek-lock receiver of the client's reply queue.
    expect : int
        Number of answered orders to wait for, >= 0.
    timeout : timedelta
        Positive; measured on ``clock`` from the call.
    clock : Clock, optional
        Time source; :class:`~clocks.SystemClock` by default.
    sleep : callable
        ``sleep(seconds)`` between empty receives; tests pass one that advances a
        :class:`~clocks.ManualClock`.
    on_progress : callable, optional
        Called with a :class:`WatchProgress` after every non-empty batch.
    poll_interval : timedelta
        Pause after an empty receive, positive (capped at the time left).
    max_count : int
        Messages per receive, >= 1.

    Returns
    -------
    WatchResult
        Final statuses and counters; ``timed_out`` tells how it stopped.

    Raises
    ------
    ValueError
        If ``expect``, ``timeout``, ``poll_interval`` or ``max_count`` is out of range.
    """
    if isinstance(expect, bool) or not isinstance(expect, int) or expect < 0:
        raise ValueError(f"expect: must be a non-negative integer, got {expect!r}")
    for name, value in (("timeout", timeout), ("poll_interval", poll_interval)):
        if not isinstance(value, timedelta) or value <= timedelta(0):
            raise ValueError(f"{name}: must be a positive timedelta, got {value!r}")
    if isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 1:
        raise ValueError(f"max_count: must be a positive integer, got {max_count!r}")
    clock = clock or SystemClock()
    deadline = clock.now() + timeout
    result = WatchResult(statuses={}, expect=expect)
    terminal = 0
    while terminal < expect:
        left = deadline - clock.now()
        if left <= timedelta(0):
            result.timed_out = True
            break
        batch = receiver.receive(max_count)
        if not batch:
            sleep(min(poll_interval, left).total_seconds())
            continue
        for message in batch:
            result.received += 1
            terminal += _handle(receiver, message, result)
        if on_progress is not None:
            on_progress(WatchProgress(terminal, expect, result.received, result.dead_lettered))
    return result


def _handle(receiver: ReplyReceiver, message: ReplyMessage, result: WatchResult) -> int:
    """Record or dead-letter one message; return 1 if an order's wait just ended."""
    settles = getattr(receiver, "settles", True)
    try:
        status = StatusMessage.model_validate_json(message.body)
    except ValidationError as exc:
        result.invalid += 1
        if not settles:
            return 0
        problems = problems_from(exc, whole="(body)")
        description = "; ".join(str(p) for p in problems)[:MAX_DESCRIPTION_CHARS]
        try:
            receiver.dead_letter(message, INVALID_STATUS_REASON, description)
            result.dead_lettered += 1
        except LockLostError:
            result.lock_lost += 1
        return 0
    new = OrderStatus(status.order_id, status.status, status.at, status.reason,
                      message.enqueued_time)
    old = result.statuses.get(new.order_id)
    if old is None or new._rank() > old._rank():
        result.statuses[new.order_id] = new
    answered = 0
    if new.status in ANSWER_KINDS and new.order_id not in result.answered:
        result.answered.add(new.order_id)
        answered = 1
    try:
        receiver.complete(message)
    except LockLostError:
        result.lock_lost += 1
    return answered
