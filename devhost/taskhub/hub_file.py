"""The task hub's one SQLite file, and what every part of the task hub shares over it.

:class:`~devhost.taskhub.store.TaskHub`'s parts share one :class:`HubFile` (connection per
thread, clock, schema), so one part's transaction may write another's rows.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import sqlitekit as db
from clocks import Clock
from devhost.taskhub.events import format_time
from devhost.taskhub.partitions import instance_hash
from devhost.taskhub.records import NewMessage
from devhost.taskhub.schema import ID_HASH_SQL_FUNCTION, SCHEMA, migrate, needs_migration


class HubFile:
    """The task hub's SQLite file (created with its schema if missing), one connection per thread.

    ``name``: host.json ``hubName``; ``default_version``: its ``defaultVersion``, given to every
    instance created without one (as the extension); ``synchronous``: :func:`sqlitekit.connect`.
    """

    def __init__(self, path: str | Path, clock: Clock, *, name: str = "TestHubName",
                 synchronous: str = "FULL", default_version: str | None = None) -> None:
        self.path = Path(path)
        self.clock = clock
        self.name = name
        self.default_version = default_version
        self._synchronous = synchronous
        self._local = threading.local()
        self._host_failed: set[str] = set()
        self._host_failed_lock = threading.Lock()
        # Own transaction, CREATE ... IF NOT EXISTS: safe for processes opening it at once.
        self.conn().executescript(SCHEMA)
        if needs_migration(self.conn()):
            with db.write(self.conn()) as conn:
                migrate(conn)

    def conn(self) -> sqlite3.Connection:
        """Return this thread's connection to the file, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.connect(self.path, synchronous=self._synchronous)
            conn.create_function(ID_HASH_SQL_FUNCTION, 1, instance_hash, deterministic=True)
            self._local.conn = conn
        return conn


    def saw_host_failures(self, keys: list[str]) -> None:
        """Remember work keys with a ``host_failures`` count (noted here, or seen at a claim)."""
        if keys:
            with self._host_failed_lock:
                self._host_failed.update(keys)

    def take_host_failures(self, keys: list[str]) -> list[str]:
        """Return (and forget) those of ``keys`` this process knows have a count to clear.

        Work another process counted is seen when it is claimed here (its claim reads the
        count), so a key left out has no count.
        """
        with self._host_failed_lock:
            if not self._host_failed:
                return []
            found = [k for k in keys if k in self._host_failed]
            self._host_failed.difference_update(found)
        return found


class HubPart:
    """A part of the task hub over its shared :class:`HubFile`, with the inbox insert all share."""

    INSERT_MESSAGES = ("INSERT INTO inbox (instance_id, execution_id, kind, timer_id, event,"
                       " visible_at) VALUES")
    """Head of a many-row insert of messages (:func:`sqlitekit.insert_rows`)."""
    INSERT_MESSAGE = INSERT_MESSAGES + " (?,?,?,?,?,?)"

    def __init__(self, file: HubFile) -> None:
        self.file = file
        self.path = file.path
        self.clock = file.clock
        self.name = file.name
        self.default_version = file.default_version
        self._conn = file.conn

    def _now(self) -> str:
        return format_time(self.clock.now())

    @staticmethod
    def _message_row(m: NewMessage) -> tuple[Any, ...]:
        """Return the parameters of :attr:`INSERT_MESSAGE` (built outside the write lock)."""
        return (m.instance_id, m.execution_id, m.kind, m.timer_id, json.dumps(m.event),
                format_time(m.visible_at))

    def _insert_message(self, conn: sqlite3.Connection, m: NewMessage) -> None:
        conn.execute(self.INSERT_MESSAGE, self._message_row(m))
