"""Watching a client's reply queue until its orders are answered (S8); see docs/client.md.

A status is recorded, then completed, so a redelivery after a crash changes nothing; an
invalid one is dead-lettered at once (it never becomes valid). Without sessions Service
Bus does not order messages: a terminal status beats a non-terminal one, then the later
``at`` wins. Time is injected, so tests run the timeout without waiting.
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
from sqlitekit import is_disk_full

INVALID_STATUS_REASON = "InvalidStatusMessage"

ANSWER_KINDS = TERMINAL_STATUS_KINDS | {StatusKind.CHANGE_REFUSED}
"""Kinds that end the wait for an order: its outcome, or the refusal of a changed resend."""

MAX_DESCRIPTION_CHARS = 1000
"""Longest DeadLetterErrorDescription written (keeps the message under its size limit)."""


class LockLostError(Exception):
    """Settling failed on a lost peek-lock; the broker redelivers and recording is idempotent."""


@dataclass(frozen=True)
class ReplyMessage:
    """A message from the reply queue; ``delivery_count`` includes this delivery."""

    body: bytes
    message_id: str
    delivery_count: int
    handle: Any = field(repr=False)
    enqueued_time: datetime | None = None
    sequence_number: int | None = None


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

    ``peek(from_sequence_number, max_count)`` returns messages in sequence order; settling
    does nothing (an invalid one stays for the consuming receiver).
    """

    settles = False

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
    """The latest status recorded for one order, with its message's enqueued time if known."""

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
    """Orders whose wait ended (:data:`ANSWER_KINDS`)."""
    expect: int
    received: int
    dead_lettered: int


@dataclass
class WatchResult:
    """Outcome of :func:`watch`; ``invalid`` counts dead-lettered or (browsing) left messages."""

    statuses: dict[str, OrderStatus]
    expect: int
    received: int = 0
    dead_lettered: int = 0
    invalid: int = 0
    lock_lost: int = 0
    disk_full_waits: int = 0
    """Receives and completions that met a full disk (local queues) and were retried."""
    timed_out: bool = False
    answered: set[str] = field(default_factory=set)
    unread_rejected: list[str] = field(default_factory=list)
    """Reasons of ``Rejected`` answers to bodies without a readable OrderID (not JSON...)."""

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

    Each batch is processed whole, so a stop never leaves a message locked. ``sleep`` runs
    between empty receives (tests advance a ManualClock with it). Raises ValueError if
    ``expect`` < 0, or ``timeout``, ``poll_interval`` or ``max_count`` is not positive.
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
        try:
            batch = receiver.receive(max_count)
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            # The local queues' disk is full: wait it out, as the host does; nothing was
            # received, so nothing is lost (peek-lock).
            result.disk_full_waits += 1
            batch = []
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
    if status.order_id is None:  # a refused body whose OrderID could not be read
        result.unread_rejected.append(status.reason or status.status.value)
        _complete(receiver, message, result)
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
    _complete(receiver, message, result)
    return answered


def _complete(receiver: ReplyReceiver, message: ReplyMessage, result: WatchResult) -> None:
    try:
        receiver.complete(message)
    except LockLostError:
        result.lock_lost += 1
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        # Not completed: redelivered once its lock ends, and recorded once (by OrderID).
        result.disk_full_waits += 1
