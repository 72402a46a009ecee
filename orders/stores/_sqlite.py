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
from sqlitekit import connect


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
    StoreError
        If the file cannot be opened as a SQLite database.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        try:
            self.conn = connect(self.path, synchronous=synchronous)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path.name}: cannot open: {exc}") from exc

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
            If the database stayed locked past the busy timeout.
        StoreError
            For any other SQLite error.
        """
        with self.lock:
            try:
                yield self.conn
            except sqlite3.OperationalError as exc:
                text = str(exc).lower()
                if "locked" in text or "busy" in text:
                    raise TransientStoreError(f"{self.path.name}: {exc}") from exc
                raise StoreError(f"{self.path.name}: {exc}") from exc
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path.name}: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()
