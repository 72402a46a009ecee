"""What the SQLite adapters share: one guarded connection and error translation.

Each adapter owns one connection from :func:`sqlitekit.connect` (WAL, busy
timeout, ``synchronous=FULL``). A lock serialises this process's threads on it, because
one connection can hold only one transaction; other processes are serialised by SQLite's
own write lock (``BEGIN IMMEDIATE`` in :func:`sqlitekit.write`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orders.stores.errors import StoreError, TransientStoreError
from sqlitekit import connect, is_busy, write


class Database:
    """A SQLite file opened for one adapter.

    Parameters
    ----------
    path : str or Path
        Database file; created with its folder if missing.
    synchronous : {"FULL", "NORMAL"}
        FULL (default) survives power loss; NORMAL only process crashes (for bulk loads).

    Raises
    ------
    TransientStoreError
        Retryable: another connection held a lock past the busy timeout while opening.
    StoreError
        Permanent: the file cannot be opened as a SQLite database.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        try:
            self.conn = connect(self.path, synchronous=synchronous)
        except sqlite3.Error as exc:
            error = TransientStoreError if is_busy(exc) else StoreError
            raise error(f"{self.path.name}: cannot open: {exc}") from exc

    @contextmanager
    def use(self) -> Iterator[sqlite3.Connection]:
        """Hold the connection for one operation, translating SQLite errors.

        Yields
        ------
        sqlite3.Connection
            The adapter's connection, exclusive to the calling thread.

        Raises
        ------
        TransientStoreError
            Retryable: the database stayed locked past the busy timeout (SQLITE_BUSY or
            SQLITE_LOCKED, told by :func:`sqlitekit.is_busy` from the error code).
        StoreError
            Permanent: any other SQLite error (a constraint, a full disk, a corrupt file).
        """
        with self.lock:
            try:
                yield self.conn
            except sqlite3.Error as exc:
                if is_busy(exc):
                    raise TransientStoreError(f"{self.path.name}: {exc}") from exc
                raise StoreError(f"{self.path.name}: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()


class SqliteAdapter:
    """Base of the SQLite adapters: one :class:`Database`, its tables, and closing it.

    Parameters
    ----------
    path : str or Path
        Database file (see :class:`Database`); the adapters' tables differ, so they may
        share one file, kept apart from the task hub (SPEC X4).
    synchronous : {"FULL", "NORMAL"}
        See :func:`sqlitekit.connect`.

    Raises
    ------
    StoreError
        As :class:`Database` raises.
    """

    SCHEMA: tuple[str, ...] = ()
    """Statements that create the adapter's tables and indexes if they are missing."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self._db = Database(path, synchronous=synchronous)
        with self._db.use() as conn, write(conn):
            self._create(conn)

    def _create(self, conn: sqlite3.Connection) -> None:
        for statement in self.SCHEMA:
            conn.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
