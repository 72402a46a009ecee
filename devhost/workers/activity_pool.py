"""The threads that run a host process's activities, and the leases they hold.

The pool only runs activity code; claims and completions go through the work loop's one
transaction per round (:meth:`~devhost.workers.dispatch.DurableWorker.run_round`), a single
writer per process, which renews running activities' leases via :meth:`ActivityPool.renew_if_due`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from devhost.failures.host_failures import describe
from devhost.taskhub.records import ActivityWorkItem
from devhost.taskhub.store import TaskHub

log = logging.getLogger("devhost.activities")

Finished = tuple[ActivityWorkItem, dict[str, Any]]
"""An activity and its TaskCompleted/TaskFailed event."""


class ActivityPool:
    """Run up to ``threads`` (``maxConcurrentActivityFunctions``) activities at once.

    ``run`` runs one activity and returns its completion event; ``on_finished`` is called from
    a runner thread after each (it wakes the work loop).
    """

    QUEUE_TARGET_S = 1.0
    """Claim what the runners finish in this time: fast activities in large batches, slow ones not
    hoarded from other processes.
    """
    MAX_CLAIMED_PER_THREAD = 64
    FIRST_CLAIMED_PER_THREAD = 1
    """Before any activity has been timed."""

    def __init__(self, run: Callable[[ActivityWorkItem], dict[str, Any]], threads: int,
                 on_finished: Callable[[], None],
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if threads < 1:
            raise ValueError("threads: must be at least 1")
        self._run_activity = run
        self.threads = threads
        self._on_finished = on_finished
        # (item, completion event) or, for a host-side failure, (item, error text).
        self._finished: queue.SimpleQueue[tuple[ActivityWorkItem, dict[str, Any] | str]] = \
            queue.SimpleQueue()
        self._failed: list[tuple[ActivityWorkItem, str]] = []
        self._running: dict[int, ActivityWorkItem] = {}
        self._todo: queue.SimpleQueue[ActivityWorkItem | None] = queue.SimpleQueue()
        # Daemon threads, not a ThreadPoolExecutor: an activity that never returns must not
        # keep a stopping host process alive (its lease expires; another attempt runs it).
        self._runners = [threading.Thread(target=self._runner, name=f"devhost-activity-{n}",
                                          daemon=True) for n in range(threads)]
        for runner in self._runners:
            runner.start()
        self._monotonic = monotonic
        self._last_renewal = monotonic()
        self._mean_run_s: float | None = None  # moving average of activity run times

    def room(self) -> int:
        """Return how many to claim: ``threads x QUEUE_TARGET_S / mean run time`` minus running."""
        if self._mean_run_s is None:
            per_thread = self.FIRST_CLAIMED_PER_THREAD
        else:
            per_thread = int(self.QUEUE_TARGET_S / max(self._mean_run_s, 1e-6))
            per_thread = max(1, min(per_thread, self.MAX_CLAIMED_PER_THREAD))
        return max(0, self.threads * per_thread - len(self._running))

    def submit(self, items: list[ActivityWorkItem]) -> None:
        """Start claimed activities (at most :meth:`room` of them)."""
        for item in items:
            self._running[item.id] = item
            self._todo.put(item)

    def take_finished(self) -> list[Finished]:
        """Return the activities finished since the last call, with events (not host failures)."""
        done: list[Finished] = []
        while True:
            try:
                item, result = self._finished.get_nowait()
            except queue.Empty:
                return done
            self._running.pop(item.id, None)
            if isinstance(result, str):
                self._failed.append((item, result))
            else:
                done.append((item, result))

    def take_failed(self) -> list[tuple[ActivityWorkItem, str]]:
        """Return the activities the host failed to run, with ``"<Type>: <message>"``."""
        failed, self._failed = self._failed, []
        return failed

    def renew_if_due(self, taskhub: TaskHub, lease: timedelta) -> None:
        """Renew the leases of running activities, every third of ``lease``."""
        if self._monotonic() - self._last_renewal < lease.total_seconds() / 3:
            return
        items = list(self._running.values())
        kept_all = taskhub.renew_activities(items, lease)  # a failure is retried next call
        self._last_renewal = self._monotonic()
        for item, kept in zip(items, kept_all, strict=True):
            if not kept:
                log.warning("lease on activity %s of %s was lost", item.name, item.instance_id)

    def shutdown(self, timeout_s: float | None = None) -> list[ActivityWorkItem]:
        """Stop: drop unstarted activities (returned, to release), wait for the running ones.

        ``timeout_s`` None waits until they finish; their outcomes stay for :meth:`take_finished`.
        """
        unstarted = []
        while True:
            try:
                item = self._todo.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                unstarted.append(item)
                self._running.pop(item.id, None)
        for _ in self._runners:
            self._todo.put(None)
        deadline = None if timeout_s is None else self._monotonic() + timeout_s
        for runner in self._runners:
            runner.join(None if deadline is None
                        else max(0.0, deadline - self._monotonic()))
        return unstarted

    def _runner(self) -> None:
        while (item := self._todo.get()) is not None:
            self._run(item)

    def _run(self, item: ActivityWorkItem) -> None:
        result: dict[str, Any] | str = "RuntimeError: the activity runner stopped"
        began = self._monotonic()
        try:
            result = self._run_activity(item)
        except Exception as exc:  # noqa: BLE001 - a host-side failure, counted by the caller
            log.debug("activity %s of %s failed in the host", item.name, item.instance_id,
                      exc_info=True)
            result = describe(exc)
        finally:
            took = self._monotonic() - began
            mean = self._mean_run_s
            self._mean_run_s = took if mean is None else 0.9 * mean + 0.1 * took
            self._finished.put((item, result))
            self._on_finished()
