"""Group commit: the write operations of a process's threads share transactions.

A write transaction costs far more than its statements: the turn at the file's write lock
(a hand-over between processes), BEGIN, COMMIT and its fsync, each a trip out of and back
into the interpreter lock. Under load several threads of a process wait for that turn at
once; here the first of them (the leader) runs every operation queued so far, its own
among them, in one transaction, then hands the lead to the oldest operation still queued.
An operation alone runs as before: one transaction, no waiting.

Each caller sees what it would have seen with a transaction of its own, in queue order:

- an operation that raises makes the batch's transaction roll back, and every operation of
  the batch is then run again, each in a transaction of its own, in the same order, so the
  failing one raises to its caller alone and the others' effects are committed, the same
  effects as one transaction each (an operation is a function of the database's state: it
  must keep no effect outside the connection until it has returned and its call has);
- a COMMIT that fails fails every operation of the batch with that error, none re-run: a
  failed commit may still have reached the disk, so running them again could apply them
  twice;
- a caller returns only once its operation is committed (or has failed).

An operation that writes with one statement (``one_statement``) and finds itself alone in
its batch runs without BEGIN and COMMIT: SQLite makes the statement a transaction of its own
(:func:`sqlitekit.write_queue`). Batched with others it shares their transaction as any
operation does.

Pattern: the leader/follower group commit of write-ahead logs (PostgreSQL flushes the WAL
of every backend waiting to commit in one fsync).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from sqlitekit import write, write_queue

__all__ = ["GroupCommit", "MAX_BATCH"]

T = TypeVar("T")

MAX_BATCH = 64
"""Operations one transaction runs at most; the others wait for the next leader."""


class _Pending(Generic[T]):
    """One queued operation: its function, then its value or error, and its wake-up."""

    __slots__ = ("op", "one_statement", "value", "error", "done", "turn")

    def __init__(self, op: Callable[[sqlite3.Connection], T], one_statement: bool) -> None:
        self.op = op
        self.one_statement = one_statement
        self.value: T | None = None
        self.error: BaseException | None = None
        self.done = False
        self.turn: threading.Event | None = None  # made only by a caller that waits

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


class GroupCommit:
    """Run write operations of several threads in shared IMMEDIATE transactions.

    Parameters
    ----------
    conn : sqlite3.Connection
        A :func:`sqlitekit.connect` connection, used by this process's threads in turn.
    lock : threading.RLock
        The connection's lock (:class:`sqlitekit.SharedConnection` ``_lock``): held for
        each transaction, so readers and direct writers of the connection take turns with it.
    max_batch : int
        Operations per transaction at most (>= 1, else ValueError).
    before_commit : callable, optional
        ``before_commit(conn)`` runs in each transaction after its operations, before COMMIT:
        bookkeeping written once per transaction (an error in it rolls the transaction back,
        as an operation's would).
    after_rollback : callable, optional
        ``after_rollback()`` runs after a transaction rolled back (forget that bookkeeping).
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, *,
                 max_batch: int = MAX_BATCH,
                 before_commit: Callable[[sqlite3.Connection], None] | None = None,
                 after_rollback: Callable[[], None] | None = None) -> None:
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f"max_batch: must be a positive integer, got {max_batch!r}")
        self._conn = conn
        self._lock = lock
        self._max_batch = max_batch
        self._before_commit = before_commit
        self._after_rollback = after_rollback
        self._guard = threading.Lock()
        self._queue: deque[_Pending[object]] = deque()
        self._leading = False
        self._inside = threading.local()
        self.transactions = 0
        """Transactions begun (batches and re-runs), for tests and measurements."""

    def run(self, op: Callable[[sqlite3.Connection], T], *, one_statement: bool = False) -> T:
        """Run ``op(conn)`` inside a write transaction, maybe with other threads' operations.

        Returns what ``op`` returned, once committed; raises what ``op`` raised (its effects
        rolled back), or the COMMIT's error (see the module docstring). RuntimeError if called
        from inside an operation (it would wait for its own batch).

        ``one_statement``: ``op`` writes with at most one statement and reads, if at all,
        only after a write that changed nothing; alone in its batch (and without
        ``before_commit`` bookkeeping) it then runs in autocommit, its statement its own
        transaction, with no BEGIN or COMMIT (module docstring).
        """
        if getattr(self._inside, "active", False):
            raise RuntimeError("GroupCommit.run: called from inside an operation of a batch")
        item: _Pending[T] = _Pending(op, one_statement)
        with self._guard:
            self._queue.append(item)  # type: ignore[arg-type]
            lead = not self._leading
            if lead:
                self._leading = True
            else:
                item.turn = threading.Event()
        if not lead:
            assert item.turn is not None
            item.turn.wait()  # set when done, or when the lead is handed to this operation
            if item.done:
                return item.outcome()
        self._lead(item)
        return item.outcome()

    def _lead(self, mine: _Pending[T]) -> None:
        """Run batches until ``mine`` is done, then hand the lead on (or give it up)."""
        try:
            while not mine.done:
                with self._guard:
                    count = min(len(self._queue), self._max_batch)
                    batch = [self._queue.popleft() for _ in range(count)]
                self._execute(batch)
                for item in batch:
                    item.done = True
                    if item.turn is not None and item is not mine:
                        item.turn.set()
        finally:
            with self._guard:
                if self._queue:
                    successor = self._queue[0]
                    assert successor.turn is not None, "only the leader queues without a turn"
                    successor.turn.set()  # it leads: it is not done
                else:
                    self._leading = False

    def _execute(self, batch: list[_Pending[object]]) -> None:
        """One transaction for the batch; on an operation's error, one each (module docstring)."""
        if len(batch) > 1 and self._together(batch):
            return
        for item in batch:
            try:
                item.value = self._transaction(item.op, item.one_statement)
            except BaseException as exc:  # noqa: BLE001 - raised to its own caller
                item.error = exc

    def _together(self, batch: list[_Pending[object]]) -> bool:
        """Run the batch in one transaction; False if an operation raised (rolled back)."""
        failed_in_op = False
        values: list[object] = []

        def run_all(conn: sqlite3.Connection) -> None:
            nonlocal failed_in_op
            for item in batch:
                try:
                    values.append(item.op(conn))
                except BaseException:
                    failed_in_op = True
                    raise

        try:
            self._transaction(run_all)
        except BaseException as exc:  # noqa: BLE001 - given to the batch's callers
            if failed_in_op:
                return False
            for item in batch:
                item.error = exc
            return True
        for item, value in zip(batch, values, strict=True):
            item.value = value
        return True

    def _transaction(self, op: Callable[[sqlite3.Connection], T],
                     one_statement: bool = False) -> T:
        self._inside.active = True
        try:
            if one_statement and self._before_commit is None:
                with self._lock, write_queue(self._conn):
                    self.transactions += 1
                    return op(self._conn)
            with self._lock, write(self._conn) as conn:
                self.transactions += 1
                try:
                    value = op(conn)
                    if self._before_commit is not None:
                        self._before_commit(conn)
                except BaseException:
                    if self._after_rollback is not None:
                        self._after_rollback()
                    raise
                return value
        finally:
            self._inside.active = False
