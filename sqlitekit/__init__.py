"""One way to open the local host's SQLite files (task hub, queues, embedded stores).

Each setting below is there for a reason that matters under crashes and several host
processes sharing one file (STYLE 5: SQLite stand-ins are production code).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

try:
    import fcntl
except ImportError:  # Windows: SQLite's own busy handler is the only cross-process queue
    fcntl = None  # type: ignore[assignment]

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write lock before ``database is locked``."""

_registry_guard = threading.Lock()


class WriteLock:
    """The queue that writers of one database file wait in, within and across processes.

    SQLite's busy handler waits for another connection's write lock by sleeping in growing
    steps (1, 2, 5 ... 100 ms), so a writer that lost the race stalls long after the lock
    was freed, and several host processes on one task hub spend their time asleep. Writers
    here queue instead: first on a ``threading.Lock`` (threads of this process), then on
    an exclusive ``flock`` of ``<database>.lock`` (other processes), which the kernel hands
    over the moment it is released, and releases by itself if the holder dies. SQLite's
    own locking still guards the data; this only decides who asks next. Without ``fcntl``
    (Windows) only the in-process queue is used and the busy timeout covers the rest.

    Parameters
    ----------
    path : Path
        The database file; the lock file is created beside it.
    """

    def __init__(self, path: Path) -> None:
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        if fcntl is not None:
            self._fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)

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


class HoldRecord:
    """A file in which this process keeps since when it holds a write lock.

    One line, rewritten in place on every take and release: the ``time.monotonic()`` at
    which the oldest write lock it holds now was taken (0: none; on Linux the clock is
    CLOCK_MONOTONIC, the same in every process), and the longest hold so far in seconds.
    A supervising process reads it with :func:`read_hold` to end a process frozen while
    holding a lock (``devhost start --lock-hold-limit-s``).

    Parameters
    ----------
    path : Path
        The record file; created or emptied.
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._guard = threading.Lock()
        self._held: dict[int, float] = {}
        self._longest_s = 0.0
        self._write()

    def taken(self, key: int) -> None:
        """Note that the lock ``key`` is held from now."""
        with self._guard:
            self._held[key] = time.monotonic()
            self._write()

    def released(self, key: int) -> None:
        """Note that the lock ``key`` is free again."""
        with self._guard:
            since = self._held.pop(key, None)
            if since is not None:
                self._longest_s = max(self._longest_s, time.monotonic() - since)
            self._write()

    def _write(self) -> None:
        oldest = min(self._held.values(), default=0.0)
        os.pwrite(self._fd, f"{oldest:20.6f} {self._longest_s:14.6f}\n".encode(), 0)


_holds: HoldRecord | None = None


def record_holds(path: str | Path) -> None:
    """Keep this process's write-lock holds in ``path`` from now on (see :class:`HoldRecord`)."""
    global _holds
    _holds = HoldRecord(Path(path))


def read_hold(path: str | Path) -> tuple[float | None, float]:
    """Read a :class:`HoldRecord`: (monotonic time the oldest hold began or None, longest s).

    A missing or unreadable record reads as no hold.
    """
    try:
        since, longest = Path(path).read_text().split()
        return (float(since) or None, float(longest))
    except (OSError, ValueError):
        return None, 0.0


_path_locks: dict[str, WriteLock] = {}


class _Connection(sqlite3.Connection):
    """A connection that knows the write lock of its database file."""

    write_lock: WriteLock


def connect(path: str | Path, *, synchronous: str = "FULL") -> sqlite3.Connection:
    """Open a SQLite database for concurrent, crash-safe use.

    Parameters
    ----------
    path : str or Path
        Database file; its parent folder is created if missing.
    synchronous : {"FULL", "NORMAL"}
        ``FULL`` (default) fsyncs the WAL on every commit, so a committed transaction
        survives a power loss, not only a process kill.

    Returns
    -------
    sqlite3.Connection
        In autocommit mode (``isolation_level=None``); use :func:`write` for transactions.

    Raises
    ------
    ValueError
        If ``synchronous`` is not FULL or NORMAL.
    """
    if synchronous not in ("FULL", "NORMAL"):
        raise ValueError("synchronous: must be FULL or NORMAL")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN IMMEDIATE ourselves (see write()); Python's
    # implicit deferred BEGIN would take the write lock late and fail with SQLITE_BUSY
    # on lock upgrade instead of waiting for the busy timeout.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30,
                           factory=_Connection)
    # WAL: readers never block the writer and the writer never blocks readers, which is
    # what several host processes polling one file need; a killed process leaves no
    # half-written page (the WAL is replayed or discarded on next open).
    conn.execute("PRAGMA journal_mode=WAL")
    # Busy timeout: another process holding the write lock makes us wait, not fail.
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # Durability level: see the parameter above.
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    with _registry_guard:
        key = str(path.resolve())
        if key not in _path_locks:
            _path_locks[key] = WriteLock(path)
        conn.write_lock = _path_locks[key]
    return conn



class SharedConnection:
    """One connection from :func:`connect` that the threads of a process take turns on.

    A connection holds one transaction at a time, so an owner (a local host's engine, the
    simulator's ledger) serialises its threads on ``_lock`` around each use of ``_conn``;
    other processes wait on the file's write lock instead (see :func:`write`).

    Parameters
    ----------
    path : str or Path
        Database file; its parent folder is created if missing.

    Notes
    -----
    Closing takes the lock, so it waits for the use in progress; the instance is
    unusable afterwards. Leaving a ``with`` block closes it.
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

@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a block as one IMMEDIATE transaction: all of it commits, or none of it.

    IMMEDIATE takes the write lock at BEGIN, so two processes doing read-then-write
    (claim a work item, check an ETag) serialise instead of deadlocking on upgrade.

    Parameters
    ----------
    conn : sqlite3.Connection
        A connection from :func:`connect`.

    Yields
    ------
    sqlite3.Connection
        The same connection, inside the transaction.
    """
    # Writers queue on the file's WriteLock first (see there): SQLite's busy handler
    # would make them sleep-poll for the write lock instead.
    lock = getattr(conn, "write_lock", None)
    with lock if lock is not None else threading.Lock():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            # SQLITE_FULL, SQLITE_IOERR (and others) roll the transaction back themselves:
            # a ROLLBACK then would raise "no transaction is active" over their error.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_FULL_CODES = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR})
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException) -> bool:
    """Tell whether ``exc``, or an exception it was raised from, says the disk is full.

    SQLITE_FULL and SQLITE_IOERR (SQLite reports a failed write of its journal as an I/O
    error) by their primary code, and ``OSError`` ENOSPC or EDQUOT. SQLite rolls back the
    transaction they end, so nothing of it was written.
    """
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
    """Tell whether SQLite refused because another connection held a lock, by its code.

    SQLITE_BUSY (another connection writes, past the busy timeout) and SQLITE_LOCKED (a
    conflict inside one shared cache) pass once the holder finishes, so the same call may
    succeed later. The primary code is the low byte of ``sqlite_errorcode`` (Python 3.11+),
    so the extended codes count too (SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_RECOVERY, ...).
    The message text is never read: it is for people, and SQLite may word it differently.

    Parameters
    ----------
    exc : sqlite3.Error
        An error raised by the ``sqlite3`` module.

    Returns
    -------
    bool
        True for SQLITE_BUSY and SQLITE_LOCKED and their extended codes; False for every
        other code and for errors the module raises without one (a closed connection).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES
