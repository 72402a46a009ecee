"""A group commit batch made on purpose (sqlitekit.group_commit).

A first operation holds the lead (blocked on an event) while the others queue behind it in
the given order; released, it hands the lead to the oldest queued one, which runs them all
in one transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from sqlitekit.group_commit import GroupCommit


class Batch:
    """Holds the lead with one operation, queues ``ops`` behind it, then lets them run."""

    def __init__(self, group: GroupCommit) -> None:
        self.group = group
        self.release = threading.Event()
        self.holding = threading.Event()
        self.results: dict[int, Any] = {}
        self.threads: list[threading.Thread] = []

    def _hold(self, conn: sqlite3.Connection) -> str:
        self.holding.set()
        assert self.release.wait(10)
        return "held"

    def run(self, ops: list[Callable[[sqlite3.Connection], Any]]) -> dict[int, Any]:
        """Run ``ops`` as one batch; each one's result or exception by index (-1: the holder)."""
        return self.calls([partial(self.group.run, op) for op in ops])

    def calls(self, calls: list[Callable[[], Any]]) -> dict[int, Any]:
        """As :meth:`run`, for calls that each queue one operation (an engine's methods)."""
        self._start(-1, lambda: self.group.run(self._hold))
        assert self.holding.wait(10)
        for index, call in enumerate(calls):
            self._start(index, call)
            self._until(partial(self._queued, index + 1))  # queued, in order
        self.release.set()
        for thread in self.threads:
            thread.join(10)
        return self.results

    def _start(self, index: int, call: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                self.results[index] = call()
            except Exception as exc:  # noqa: BLE001 - the test reads it
                self.results[index] = exc
        thread = threading.Thread(target=run)
        self.threads.append(thread)
        thread.start()

    def _queued(self, count: int) -> bool:
        return len(self.group._queue) == count

    @staticmethod
    def _until(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 10
        while not condition():
            assert time.monotonic() < deadline, "the operation never queued"
            time.sleep(0.001)
