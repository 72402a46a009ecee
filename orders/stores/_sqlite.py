"""What the SQLite adapters share: one guarded connection and error translation.

A lock serialises this process's threads on the connection (one transaction at a time);
other processes serialise on SQLite's write lock (``BEGIN IMMEDIATE``). The hot writes go
through :meth:`Database.transact`, where concurrent threads' writes share a transaction.
"""

from __future__ import annotations

import atexit
import json
import os
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TypeVar

from orders.stores.errors import StoreError, TransientStoreError
from sqlitekit import connect, is_busy, write
from sqlitekit.group_commit import GroupCommit

T = TypeVar("T")

COUNTS_DIR_ENV = "STORE_OPERATION_COUNTS_DIR"
"""Folder for this process's store operation counts (benchmark cost per order); unset: none."""

COUNTS_WRITE_INTERVAL_S = 1.0
"""Seconds between count writes while counting (and once more at exit)."""

APP_PACKAGES = frozenset({"scheduler", "supervisor", "activities", "agents", "ops",
                          "orchestrators"})
"""Packages whose outermost frame on the stack an operation is counted under."""


def _caller() -> str:
    """Return ``module.function`` of the outermost app frame on this thread's stack."""
    frame: FrameType | None = sys._getframe(2)
    found = "other"
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.partition(".")[0] in APP_PACKAGES:
            found = f"{module}.{frame.f_code.co_name}"
        frame = frame.f_back
    return found


class OperationCounts:
    """Count store operations as the Cosmos DB adapter would send them, to price them in RUs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / f"store-ops-{os.getpid()}.json"
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()
        self._written = 0.0
        atexit.register(self.write)

    def add(self, store: str, kind: str, n: int = 1) -> None:
        """Count ``n`` operations; write the file if the last write is old enough."""
        caller = _caller()
        with self._lock:
            self.counts[(store, kind, caller)] += n
            due = time.monotonic() - self._written >= COUNTS_WRITE_INTERVAL_S
        if due:
            self.write()

    def write(self) -> None:
        """Replace the counts file with the totals so far."""
        with self._lock:
            self._written = time.monotonic()
            counts: dict[str, dict[str, int]] = {}
            callers: dict[str, dict[str, int]] = {}
            for (store, kind, caller), n in sorted(self.counts.items()):
                counts.setdefault(store, {}).setdefault(kind, 0)
                counts[store][kind] += n
                key = f"{store}.{kind}"
                callers.setdefault(caller, {}).setdefault(key, 0)
                callers[caller][key] += n
            doc = {"argv": sys.argv[:2], "counts": counts, "callers": callers}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_suffix(".tmp")
        temp.write_text(json.dumps(doc))
        temp.replace(self.path)


_counts: OperationCounts | None = None
_counts_lock = threading.Lock()


def operation_counts() -> OperationCounts | None:
    """Return this process's counts if :data:`COUNTS_DIR_ENV` is set, else None."""
    global _counts
    folder = os.environ.get(COUNTS_DIR_ENV)
    if not folder:
        return None
    with _counts_lock:
        if _counts is None or _counts.path.parent != Path(folder):
            _counts = OperationCounts(Path(folder))
        return _counts


class Database:
    """A SQLite file opened for one adapter (created with its folder if missing).

    ``synchronous``: FULL survives power loss, NORMAL only process crashes (bulk loads).

    Raises
    ------
    TransientStoreError
        Another connection held a lock past the busy timeout while opening.
    StoreError
        The file cannot be opened as a SQLite database.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL",
                 name: str = "") -> None:
        self.path = Path(path)
        self.name = name or self.path.stem
        self.counts = operation_counts()
        self.lock = threading.RLock()
        try:
            self.conn = connect(self.path, synchronous=synchronous)
        except sqlite3.Error as exc:
            error = TransientStoreError if is_busy(exc) else StoreError
            raise error(f"{self.path.name}: cannot open: {exc}") from exc
        # The hot writes (state records, log entries, reservations) of concurrent activities
        # share transactions under load (sqlitekit.group_commit).
        self._group = GroupCommit(self.conn, self.lock)

    def count(self, kind: str, n: int = 1) -> None:
        """Count ``n`` store operations of ``kind`` (when counting is on)."""
        if self.counts is not None:
            self.counts.add(self.name, kind, n)

    @contextmanager
    def use(self, kind: str | None = None) -> Iterator[sqlite3.Connection]:
        """Hold the connection for one operation, counting one ``kind`` and translating errors.

        Raises
        ------
        TransientStoreError
            The database stayed locked past the busy timeout (by error code).
        StoreError
            Any other SQLite error (a constraint, a full disk, a corrupt file).
        """
        if kind is not None:
            self.count(kind)
        with self.lock:
            try:
                yield self.conn
            except sqlite3.Error as exc:
                if is_busy(exc):
                    raise TransientStoreError(f"{self.path.name}: {exc}") from exc
                raise StoreError(f"{self.path.name}: {exc}") from exc

    def transact(self, op: Callable[[sqlite3.Connection], T], kind: str | None = None, *,
                 one_statement: bool = False) -> T:
        """Run ``op(conn)`` in a write transaction, maybe with other threads' (group commit).

        Counts one ``kind`` as :meth:`use`. ``op`` may run twice (its batch rolled back, see
        :mod:`sqlitekit.group_commit`): it must keep no effect outside the connection, so
        operation counts that depend on its outcome are counted by the caller after it.
        ``one_statement``: ``op`` writes with one statement, reading only after a write that
        changed nothing; alone, it runs as that statement alone, no BEGIN and COMMIT
        (:meth:`sqlitekit.group_commit.GroupCommit.run`).

        Raises
        ------
        TransientStoreError, StoreError
            As :meth:`use`; any other error of ``op`` as it raised it.
        """
        if kind is not None:
            self.count(kind)
        try:
            return self._group.run(op, one_statement=one_statement)
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise TransientStoreError(f"{self.path.name}: {exc}") from exc
            raise StoreError(f"{self.path.name}: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()


class SqliteAdapter:
    """Base of the SQLite adapters: one :class:`Database` with its tables; raises as it does."""

    STORE = ""
    """The store's name in operation counts (its Cosmos DB container); the file's if empty."""

    SCHEMA: tuple[str, ...] = ()
    """Statements creating the adapter's tables and indexes if missing."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self._db = Database(path, synchronous=synchronous, name=self.STORE)
        with self._db.use() as conn, write(conn):
            self._create(conn)

    def _create(self, conn: sqlite3.Connection) -> None:
        for statement in self.SCHEMA:
            conn.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
