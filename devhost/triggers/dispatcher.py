"""One Service Bus dispatcher per host process, instead of a polling thread per message slot.

The Functions host runs a message processor per queue-triggered function that keeps at most
``maxConcurrentCalls`` (host.json ``extensions.serviceBus``) messages of it in hand; with
``prefetchCount`` 0 it locks a message only when a call is free to run it. Here one thread
does that for every such function of the process: each round it settles the async calls
that finished, then, for each function with free slots, receives at most that many messages
of its queue in one peek-lock receive, and hands each to its slot at once, so nothing is
locked that no slot runs. ``def`` functions run on :class:`SlotPool` (daemon threads, one per
slot in use at most), ``async def`` ones on the loop the app's async functions share
(:func:`devhost.app.invoke.start`), as the Python worker runs them. Handling and settling a
message is :class:`~devhost.triggers.servicebus.ServiceBusTriggerPoller`'s, unchanged: lock
renewal, complete or abandon, host failures (L3), the disk gate.

An idle dispatcher waits once for all its queues: the engine's doorbell
(:meth:`~sqlitebus.ServiceBusEngine.add_waker`), a slot freeing, or the next message becoming
visible (a scheduled time, an expiring lock), bounded by the host's growing poll delay for
what no doorbell announces. A round woken by a slot freeing does not read a queue again
whose last read is fresh and that no ring or receive has touched since: only a ring (a
send, an abandon) or time makes a message visible sooner than that read said. Drain mode
(:meth:`devhost.run.host.LocalHost.run_until_idle`) keeps calling the pollers' ``poll_once``
in one thread instead.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from clocks import Clock
from devhost.app import invoke
from devhost.failures.disk_gate import CHECK_EVERY_S, DiskGate
from devhost.triggers.servicebus import Running, ServiceBusTriggerPoller
from sqlitebus import MessagingEntityNotFoundError
from sqlitebus.models import ReceivedMessage

log = logging.getLogger("devhost.servicebus")

FIRST_DELAY_S = 0.001
MAX_DELAY_S = 0.05
"""The idle wait's bound grows from :data:`FIRST_DELAY_S` to this, as the host's other loops."""

FRESH_S = MAX_DELAY_S
"""How long a woken round may answer from the last read of a queue instead of reading again
(:meth:`ServiceBusDispatcher.run_round`): a ring another process sent and the doorbell
dropped is found within this, as by the idle wait's poll."""


class SlotPool:
    """Daemon threads running ``def`` functions' messages, started on demand up to ``threads``.

    Daemon threads, as the activity pool's: a function that never returns must not keep a
    stopping host process alive (its message's lock expires; it is delivered again). The
    caller submits at most ``threads`` works at once (the slots); an idle host has none.
    """

    def __init__(self, threads: int, name: str) -> None:
        self.threads = threads
        self._name = name
        self._todo: queue.SimpleQueue[tuple[Callable[[], None], Callable[[], None]] | None] = \
            queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started: list[threading.Thread] = []
        self._idle = 0

    def submit(self, work: Callable[[], None], then: Callable[[], None]) -> None:
        """Run ``work`` on an idle thread, or a new one; call ``then`` once that thread is idle.

        So a slot freed in ``then`` always finds a thread: one submitted past ``threads``
        works at once waits for the first to end.
        """
        with self._lock:
            if self._idle:
                self._idle -= 1
            elif len(self._started) < self.threads:
                thread = threading.Thread(target=self._runner, daemon=True,
                                          name=f"{self._name}-{len(self._started)}")
                self._started.append(thread)
                thread.start()
        self._todo.put((work, then))

    def close(self) -> None:
        """Let each thread end after its current work."""
        with self._lock:
            for _ in self._started:
                self._todo.put(None)

    def _runner(self) -> None:
        while (item := self._todo.get()) is not None:
            work, then = item
            try:
                work()
            finally:
                with self._lock:
                    self._idle += 1
                then()


@dataclass(eq=False)
class _Function:
    """One queue-triggered function: its handler and how many of its slots run now."""

    poller: ServiceBusTriggerPoller
    slots: int
    is_async: bool
    running: int = 0

    @property
    def free(self) -> int:
        return self.slots - self.running


class ServiceBusDispatcher:
    """Feed every queue-triggered function of a process from one thread (see the module).

    ``pollers``: :func:`~devhost.run.runtime.build_host`'s, ``maxConcurrentCalls`` of each
    function; a function's slots are its pollers, the first handles its messages.
    ``monotonic``: seconds, what ages a read against :data:`FRESH_S` (tests freeze it).
    """

    def __init__(self, pollers: Sequence[ServiceBusTriggerPoller], clock: Clock,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if not pollers:
            raise ValueError("pollers: at least one queue-triggered function's")
        by_name: dict[str, list[ServiceBusTriggerPoller]] = {}
        for poller in pollers:
            by_name.setdefault(poller.fdef.name, []).append(poller)
        self._functions = [_Function(group[0], len(group), invoke.is_async(group[0].fdef.func))
                           for group in by_name.values()]
        self._by_queue: dict[str, list[_Function]] = {}
        for f in self._functions:
            self._by_queue.setdefault(f.poller.queue.lower(), []).append(f)
        self._engine = pollers[0].engine
        self._clock = clock
        self._monotonic = monotonic
        self._pool = SlotPool(sum(f.slots for f in self._functions if not f.is_async),
                              "devhost-servicebus-call")
        self._ready = threading.Event()
        self._lock = threading.Lock()  # the functions' running counts, _stopped
        self._finished: queue.SimpleQueue[tuple[_Function, Running]] = queue.SimpleQueue()
        self._stopped = False
        # The last read of each queue (as the pollers spell it): its next visible time (None:
        # none queued) and the monotonic time of the read; forgotten when the dispatcher
        # receives from it. _rang: lower-case names rung since their last read (set in the
        # waking thread; a ring between the read's start and its end is read again).
        self._seen: dict[str, tuple[datetime | None, float]] = {}
        self._rang: set[str] = set()

    def wake(self) -> None:
        """End the idle wait now (a stop, or new work the caller knows of)."""
        self._ready.set()

    def in_hand(self) -> int:
        """Return how many received messages run now (not settled yet)."""
        with self._lock:
            return sum(f.running for f in self._functions)

    def run(self, stop: threading.Event, deadline: Callable[[], float],
            gate: DiskGate | None = None,
            on_failure: Callable[[Exception, str], None] | None = None) -> None:
        """Dispatch until ``stop`` is set, then wait for the messages in hand (:meth:`wind_down`).

        ``deadline()``: the monotonic time by which a stop wants them settled; ``gate`` closed
        (the data disk full): nothing is received; ``on_failure`` gets a failed round's error.
        """
        key = self._engine.add_waker(self._by_queue, self._rung)
        delay = FIRST_DELAY_S
        woken = False
        try:
            while not stop.is_set():
                if gate is not None and not gate.is_open():
                    self._settle_finished()
                    stop.wait(CHECK_EVERY_S)
                    woken = False
                    continue
                self._ready.clear()
                try:
                    received, due = self.run_round(trust_seen=woken)
                except Exception as exc:  # noqa: BLE001 - the next round tries again
                    if on_failure is None:
                        raise
                    on_failure(exc, "Service Bus dispatcher round failed")
                    received, due = 0, None
                if received:
                    delay = FIRST_DELAY_S
                    woken = False
                    continue
                # A wait that ran out polls (reads) in the next round; a woken one may not.
                woken = self._ready.wait(self._idle_timeout(delay, due))
                delay = min(delay * 2, MAX_DELAY_S)
        finally:
            self._engine.remove_waker(key)
            self.wind_down(deadline())

    def run_round(self, *, trust_seen: bool = False) -> tuple[int, datetime | None]:
        """Settle finished async calls, receive for the free slots and hand the messages out.

        One read for the queues with free slots (``ServiceBusEngine.next_visible_of``), then
        one receive per function whose queue has a message ready, of at most its free slots.
        ``trust_seen`` (a woken round): if every such queue's last read is younger than
        :data:`FRESH_S`, found nothing visible yet, and no ring or receive of this dispatcher
        came since, that read answers and nothing is read (the same answer: only a ring or
        time makes a message visible sooner). Returns the messages received and when the
        next message of a queue with free slots becomes visible (None if none is queued).
        """
        self._settle_finished()
        free = [f for f in self._functions if f.free > 0]
        if not free:
            return 0, None
        queues = {f.poller.queue for f in free}
        if trust_seen:
            known, due = self._seen_due(queues)
            if known:
                return 0, due
        visible = self._read(queues)
        now = self._clock.now()
        received = 0
        for f in free:
            at = visible.get(f.poller.queue)
            if at is None or at > now:
                continue
            self._seen.pop(f.poller.queue, None)  # what this receive leaves is not known
            messages = self._engine.receive(f.poller.queue, f.free, lock_owner=f.poller.owner,
                                            seen_ready=True)
            received += len(messages)
            for m in messages:
                self._hand_out(f, m)
        return received, min((at for at in visible.values() if at > now), default=None)

    def wind_down(self, deadline: float) -> None:
        """Wait until the messages in hand are settled or the monotonic ``deadline`` passes.

        Nothing more is received. An async call still running at the deadline is settled by
        its own thread when it ends, as a sync one is by its pool thread.
        """
        while self.in_hand() and time.monotonic() < deadline:
            self._ready.clear()
            self._settle_finished()
            if self.in_hand():
                self._ready.wait(min(MAX_DELAY_S, max(0.0, deadline - time.monotonic())))
        with self._lock:
            self._stopped = True
        self._settle_finished()
        self._pool.close()

    def _seen_due(self, queues: set[str]) -> tuple[bool, datetime | None]:
        # (True, the earliest next visible time) if the last reads answer for every queue.
        now, monotonic = self._clock.now(), self._monotonic()
        due: datetime | None = None
        for name in queues:
            seen = self._seen.get(name)
            if seen is None or name.lower() in self._rang:
                return False, None
            at, read_at = seen
            if monotonic - read_at > FRESH_S or (at is not None and at <= now):
                return False, None
            if at is not None:
                due = at if due is None else min(due, at)
        return True, due

    def _read(self, queues: set[str]) -> dict[str, datetime]:
        for name in queues:
            self._rang.discard(name.lower())  # before the read: a later ring reads again
        read_at = self._monotonic()
        visible, complete = self._next_visible(queues)
        if complete:
            self._seen.update({name: (visible.get(name), read_at) for name in queues})
        return visible

    def _next_visible(self, queues: set[str]) -> tuple[dict[str, datetime], bool]:
        # The times, and whether every queue was read (else none is remembered).
        try:
            return self._engine.next_visible_of(queues), True
        except MessagingEntityNotFoundError:
            pass
        # A queue the engine does not know (say, of a client not declared) fails its own
        # functions only, as each queue's poller did: logged each round, the others served.
        visible: dict[str, datetime] = {}
        for name in queues:
            try:
                visible.update(self._engine.next_visible_of([name]))
            except MessagingEntityNotFoundError as exc:
                log.error("the functions of queue %s receive nothing: %s", name, exc)
        return visible, False

    def _idle_timeout(self, delay: float, due: datetime | None) -> float:
        if due is None:
            return delay
        return max(0.0, min(delay, (due - self._clock.now()).total_seconds()))

    def _rung(self, queue_name: str) -> None:
        # Under the engine's wake lock: only signal. A queue whose functions are all busy
        # need not wake the dispatcher: a slot freeing does (and its round reads again).
        self._rang.add(queue_name)
        if any(f.free > 0 for f in self._by_queue.get(queue_name, ())):
            self._ready.set()

    def _hand_out(self, f: _Function, m: ReceivedMessage) -> None:
        with self._lock:
            f.running += 1
        if not f.is_async:
            self._pool.submit(partial(f.poller.handle, m), partial(self._release, f))
            return
        running = f.poller.start(m)
        if running is None:  # settled already (a host failure) or left to its lock's expiry
            self._release(f)
            return
        running.future.add_done_callback(lambda _: self._done(f, running))

    def _done(self, f: _Function, running: Running) -> None:
        # On the shared loop's thread: the settlement waits for the dispatcher's next round,
        # not the loop; after a stop, a thread of its own settles it.
        with self._lock:
            stopped = self._stopped
        if stopped:
            threading.Thread(target=self._finish, args=(f, running), daemon=True,
                             name="devhost-servicebus-settle").start()
            return
        self._finished.put((f, running))
        self._ready.set()

    def _settle_finished(self) -> None:
        while True:
            try:
                f, running = self._finished.get_nowait()
            except queue.Empty:
                return
            self._finish(f, running)

    def _finish(self, f: _Function, running: Running) -> None:
        try:
            f.poller.finish(running)
        finally:
            self._release(f)

    def _release(self, f: _Function) -> None:
        with self._lock:
            f.running -= 1
        self._ready.set()
