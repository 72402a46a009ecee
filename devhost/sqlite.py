"""One way to open the local host's SQLite files (task hub, queues, embedded stores).

Each setting below is there for a reason that matters under crashes and several host
processes sharing one file (STYLE 5: SQLite stand-ins are production code).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write lock before ``database is locked``."""

_path_locks: dict[str, threading.Lock] = {}
_registry_guard = threading.Lock()


class _Connection(sqlite3.Connection):
    """A connection that knows the in-process write lock of its database file."""

    write_lock: threading.Lock


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
        conn.write_lock = _path_locks.setdefault(str(path.resolve()), threading.Lock())
    return conn


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
    # Writers of one process queue on a Python lock first: SQLite's own busy handler waits
    # by sleeping in growing steps (up to 100 ms), which stalls threads that could have
    # gone the moment the lock was free. Other processes still meet the busy timeout.
    lock = getattr(conn, "write_lock", None)
    with lock if lock is not None else threading.Lock():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")
