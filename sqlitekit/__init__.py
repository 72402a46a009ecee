"""One way to open the local host's SQLite files (task hub, queues, embedded stores).

Connections are autocommit WAL files (readers never block the writer; a killed process
leaves no half-written page) with a busy timeout, and :func:`write` runs IMMEDIATE
transactions. Writers queue on a :class:`WriteLock` per file - a ``threading.Lock``, then an
exclusive ``flock`` of ``<database>.lock`` the kernel hands over at once and frees if the
holder dies - since SQLite's busy handler sleeps in growing steps (1, 2, 5 ... 100 ms), so a
writer that lost the race stalls long after the lock is free. SQLite still guards the data.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
from pathlib import Path
from typing import NamedTuple, Self

from sqlitekit import statement_count
from sqlitekit.batches import ROWS_PER_STATEMENT, first_of_each, insert_rows, run_for_each
from sqlitekit.holds import HoldBlock, HoldRecord, attach, read_hold
from sqlitekit.kernel_locks import kernel_inode

__all__ = ["BUSY_TIMEOUT_MS", "ROWS_PER_STATEMENT", "HoldBlock", "HoldRecord",
           "SharedConnection", "WriteLock", "Written", "attach", "connect", "first_of_each",
           "insert_rows", "is_busy", "is_disk_full", "read_hold", "record_holds",
           "run_for_each", "write", "write_one", "write_queue"]

try:
    import fcntl
except ImportError:  # Windows: SQLite's own busy handler is the only cross-process queue
    fcntl = None  # type: ignore[assignment]

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write lock before ``database is locked``."""

_registry_guard = threading.Lock()


class WriteLock:
    """The queue the writers of one database file wait in (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._inode = 0
        if fcntl is not None:
            self._fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            self._inode = kernel_inode(self._fd)
            if _holds is not None:
                _holds.lock_file(self._fd, self._inode)

    def __enter__(self) -> WriteLock:
        self._thread_lock.acquire()
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._thread_lock.release()
                raise
        if _holds is not None:
            _holds.taken(id(self))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        # After the unlock: a process stopped in between still reads as holding (and may be
        # ended for it), never the other way round.
        if _holds is not None:
            _holds.released(id(self))
        self._thread_lock.release()


_holds: HoldRecord | None = None


def record_holds(name: str | None = None) -> HoldRecord:
    """Keep this process's write-lock holds from now on (see :mod:`sqlitekit.holds`).

    ``name``: the :class:`HoldBlock` its supervising process created; None keeps them in
    this process's memory. Raises OSError or ValueError if there is no such block.
    """
    global _holds
    record = HoldRecord(attach(name) if name is not None else None)
    with _registry_guard:
        for lock in _path_locks.values():  # opened before: named too
            if lock._fd is not None:
                record.lock_file(lock._fd, lock._inode)
        _holds = record
    return record


def _forget_after_fork() -> None:
    """In a child forked from this process: let go of the parent's write locks and record.

    The child shares each lock file's open file description with the parent, so its
    ``flock`` would be the parent's (no queue between them) and would keep the lock held
    after the parent is killed; its notes would race the parent's in the parent's hold
    record. It opens its own lock files on its next :func:`connect`.
    """
    global _holds, _path_locks, _registry_guard
    _registry_guard = threading.Lock()  # a copy the forking thread held (before= below)
    for lock in _path_locks.values():
        fd, lock._fd = lock._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
    _path_locks = {}
    _holds = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=lambda: _registry_guard.acquire(),
                        after_in_parent=lambda: _registry_guard.release(),
                        after_in_child=_forget_after_fork)


_path_locks: dict[str, WriteLock] = {}


class _Connection(sqlite3.Connection):

    write_lock: WriteLock


class _CountedConnection(statement_count.CountedConnection, _Connection):
    """A connection of a process whose statements are counted (the benchmark's)."""


def connect(path: str | Path, *, synchronous: str = "FULL") -> sqlite3.Connection:
    """Open ``path`` (parent folder created) in autocommit mode; use :func:`write` for transactions.

    ``synchronous``: "FULL" fsyncs each commit (survives power loss) or "NORMAL", else ValueError.
    """
    if synchronous not in ("FULL", "NORMAL"):
        raise ValueError("synchronous: must be FULL or NORMAL")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: write() issues BEGIN IMMEDIATE; Python's deferred BEGIN would
    # take the write lock late and fail with SQLITE_BUSY on upgrade instead of waiting.
    counts = statement_count.counter()  # the benchmark's, else None
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30,
                           factory=_CountedConnection if counts is not None and counts.in_python
                           else _Connection)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    if counts is not None:
        counts.trace(conn, path)
    with _registry_guard:
        key = str(path.resolve())
        if key not in _path_locks:
            _path_locks[key] = WriteLock(path)
        conn.write_lock = _path_locks[key]
    return conn



class SharedConnection:
    """One :func:`connect` connection the threads of a process take turns on, under ``_lock``.

    Closing (also leaving ``with``) waits for the use in progress; the instance is dead after.
    """

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._lock = threading.RLock()
        self._conn = connect(self._path)

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self._path

    def close(self) -> None:
        """Close the connection, once the use in progress ends."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

class _Transaction:
    """The context manager :func:`write` returns (a class: cheaper than a generator's)."""

    __slots__ = ("_conn", "_lock")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        lock = getattr(conn, "write_lock", None)
        self._lock: WriteLock | threading.Lock = lock if lock is not None else threading.Lock()

    def __enter__(self) -> sqlite3.Connection:
        self._lock.__enter__()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self._conn

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        conn = self._conn
        try:
            if exc_type is None:
                conn.execute("COMMIT")
                return
        except BaseException:
            _roll_back(conn)
            raise
        else:
            _roll_back(conn)
        finally:
            self._lock.__exit__(None, None, None)


def _roll_back(conn: sqlite3.Connection) -> None:
    """Roll back what is still open of a transaction that failed."""
    # SQLITE_FULL, SQLITE_IOERR (and others) roll the transaction back themselves:
    # a ROLLBACK then would raise "no transaction is active" over their error.
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def write(conn: sqlite3.Connection) -> _Transaction:
    """Run the block as one IMMEDIATE transaction: write lock at BEGIN, so no upgrade deadlock."""
    return _Transaction(conn)


def write_queue(conn: sqlite3.Connection) -> WriteLock | threading.Lock:
    """Return the queue of ``conn``'s writers, to hold for a write that needs no BEGIN.

    A statement run outside a transaction is a transaction of its own (SQLite's
    autocommit): atomic, and committed with the file's ``synchronous`` setting as
    ``BEGIN IMMEDIATE``/``COMMIT`` around it would be, in one statement instead of three.
    Holding the queue keeps the writers' turns :func:`write` keeps (:func:`write_one` for
    one statement; :class:`sqlitekit.group_commit.GroupCommit` for an operation of one
    write). A connection not opened by :func:`connect` gets a lock of its own (no queue).
    """
    lock = getattr(conn, "write_lock", None)
    return lock if lock is not None else threading.Lock()


class Written(NamedTuple):
    """What :func:`write_one` did: rows changed, and the rows its ``RETURNING`` gave."""

    rowcount: int
    rows: list[sqlite3.Row]


def write_one(conn: sqlite3.Connection, sql: str,
              params: tuple[object, ...] | list[object] = ()) -> Written:
    """Run one writing statement as its own transaction, in the writers' queue of :func:`write`.

    A single statement is atomic in SQLite (autocommit: it is its own transaction, committed,
    and with ``synchronous=FULL`` synced, before it returns), so BEGIN and COMMIT around it
    are two trips that change nothing. Raises RuntimeError inside an open transaction, else
    what :meth:`sqlite3.Connection.execute` raises.
    """
    if conn.in_transaction:
        raise RuntimeError("write_one: a transaction is open on this connection")
    with write_queue(conn):
        cursor = conn.execute(sql, params)
        rows = cursor.fetchall()  # all of them before the lock is let go
        return Written(cursor.rowcount, rows)


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_FULL_CODES = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR})
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException) -> bool:
    """Tell whether ``exc`` or a cause says disk full (SQLITE_FULL/IOERR, ENOSPC, EDQUOT)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "sqlite_errorcode", None)
        if isinstance(current, sqlite3.Error) and code is not None and \
                code & 0xFF in _FULL_CODES:
            return True
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return True
        current = current.__cause__ or current.__context__
    return False


def is_busy(exc: sqlite3.Error) -> bool:
    """Tell whether SQLITE_BUSY/LOCKED (extended codes too) refused ``exc``; text unread."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES
