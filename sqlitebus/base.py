"""Shared state of the engine (connection, clock, catalog, entity and lock checks)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self

from azurekit.queues import QueueCatalog, QueueProperties, load_queue_catalog
from clocks import Clock, SystemClock
from sqlitebus.errors import MessageLockLostError, MessagingEntityNotFoundError
from sqlitebus.models import DEAD_LETTER_SUFFIX
from sqlitebus.schema import OperationTally, ensure_schema, from_us, to_us
from sqlitekit import SharedConnection, write
from sqlitekit.doorbell import Doorbell
from sqlitekit.group_commit import GroupCommit

_DECLARED_CLIENTS_DDL = ("CREATE TABLE IF NOT EXISTS declared "
                         "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
"""What the local host declared exists (``client_ids``: the clients with queues)."""

FILE_NAME = "servicebus.sqlite"
"""File name of the engine's database inside the host's data folder."""


def _new_lock_token() -> str:
    return str(uuid.uuid4())


class EngineBase(SharedConnection):
    """Open the engine's file and hold what every operation shares (clock default: system).

    One instance serves several threads (serialised on its connection); each process opens its own.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        catalog: QueueCatalog | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._catalog = catalog if catalog is not None else load_queue_catalog()
        self._clock = clock if clock is not None else SystemClock()
        super().__init__(path)
        # A new lock token per message a receive locks, inside its one UPDATE (the engine's).
        self._conn.create_function("sb_new_lock_token", 0, _new_lock_token)
        # Sends and abandons wake waiting receivers at once (`wait_for_send`): this process's
        # directly, other processes' through the file's doorbell, else at their next poll.
        self._doorbell = Doorbell(path, self._rung)
        self._sent_lock = threading.Lock()
        self._sent: dict[str, threading.Condition] = {}
        self._send_marks: dict[str, int] = {}
        self._wakers: dict[int, tuple[frozenset[str], Callable[[str], None]]] = {}
        self._waker_keys = itertools.count()
        self._registered: set[str] = set(self._catalog.queues)
        # Every message operation writes through it: under load one transaction serves
        # several threads' sends, receives and settlements (sqlitekit.group_commit).
        self._pruned_us: dict[str, int] = {}  # queue -> last duplicate-history prune
        # Their billed operation counts are written once per transaction, before its COMMIT.
        self._tally = OperationTally()
        self._group = GroupCommit(self._conn, self._lock, before_commit=self._tally.flush,
                                  after_rollback=self._tally.discard)
        ensure_schema(self._conn)
        with self._lock, write(self._conn):
            now = self._now_us()
            for name in self._catalog.queues:
                self._conn.execute(
                    "INSERT OR IGNORE INTO queues (name, created_us) VALUES (?, ?)", (name, now)
                )
            self._conn.execute(_DECLARED_CLIENTS_DDL)
            row = self._conn.execute(
                "SELECT value FROM declared WHERE key = 'client_ids'").fetchone()
        if row is not None and self._catalog.client_ids is None:
            self._catalog = self._catalog.for_clients(frozenset(json.loads(row["value"])))

    def declare_clients(self, client_ids: Iterable[str]) -> None:
        """Make the per-client queues of exactly these clients exist, for every opener of the file.

        As Bicep makes ``orders-``/``replies-<clientId>`` from ``clients`` (``infra/main.bicep``);
        until the first declaration every client's queues are made on first use.
        """
        ids = sorted({c.lower() for c in client_ids})
        with self._lock, write(self._conn):
            self._conn.execute(
                "INSERT OR REPLACE INTO declared (key, value) VALUES ('client_ids', ?)",
                (json.dumps(ids),))
        self._catalog = self._catalog.for_clients(frozenset(ids))

    @classmethod
    def in_data_dir(cls, data_dir: str | Path, **kwargs: Any) -> Self:
        """Open ``<data_dir>/servicebus.sqlite``; keyword arguments as for the constructor."""
        return cls(Path(data_dir) / FILE_NAME, **kwargs)

    @property
    def catalog(self) -> QueueCatalog:
        """The queue properties in force."""
        return self._catalog

    def send_mark(self, queue: str) -> int:
        """Return how often ``queue`` got receivable messages here; take it before a receive."""
        with self._sent_lock:
            return self._send_marks.get(queue.lower(), 0)

    def wait_for_send(self, queue: str, mark: int, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a message of ``queue`` made receivable after ``mark``.

        By this instance, or by another that rang the file's doorbell (this instance listens
        from its first wait on; :mod:`sqlitekit.doorbell`); else the caller's next poll finds it.
        """
        self.listen()
        name = queue.lower()
        with self._sent_lock:
            sent = self._sent.get(name)
            if sent is None:  # not setdefault: a Condition is costly to make on every wait
                sent = self._sent[name] = threading.Condition(self._sent_lock)
            return sent.wait_for(lambda: self._send_marks.get(name, 0) != mark, timeout_s)

    def add_waker(self, queues: Iterable[str], wake: Callable[[str], None]) -> int:
        """Call ``wake(queue)`` whenever a message of one of ``queues`` may have become receivable.

        The doorbell of several queues at once (one waiter for all of them, as a process's
        Service Bus dispatcher): called, with the queue's lower-case name, after a commit of
        this instance made one receivable (a send, an abandon) or when another process rang
        for it; never for a lock running out or a scheduled time coming (the caller bounds
        its wait by :meth:`~sqlitebus.ServiceBusEngine.next_visible_of`). ``wake`` runs in
        the waking thread with the engine's wake lock held: it must only signal (set an
        event). Listens to the doorbell from now on. Returns a key for :meth:`remove_waker`.
        """
        names = frozenset(q.lower() for q in queues)
        self.listen()
        with self._sent_lock:
            key = next(self._waker_keys)
            self._wakers[key] = (names, wake)
        return key

    def remove_waker(self, key: int) -> None:
        """Stop calling the waker added under ``key`` (unknown keys are ignored)."""
        with self._sent_lock:
            self._wakers.pop(key, None)

    def listen(self) -> None:
        """Hear other processes' sends from now on (idempotent; the first wait does it too)."""
        self._doorbell.listen()

    def wake_receiver(self, queue: str) -> None:
        """Wake one receiver of this instance waiting in :meth:`wait_for_send` on ``queue``."""
        self._wake_local(queue.lower(), 1)

    def close(self) -> None:
        """Stop listening to the doorbell and close the connection (see SharedConnection)."""
        self._doorbell.close()
        super().close()

    def _made_receivable(self, name: str, count: int) -> None:
        """After the commit that made ``count`` messages of ``name`` receivable: wake waiters."""
        if count:
            self._wake_local(name, count)
            self._doorbell.ring(name)

    def _rung(self, name: str) -> None:
        # Any local process can send to the socket: only a queue this instance has declared
        # or used counts (a mark is kept per queue, so stray names would grow them; a reply
        # queue pattern admits any client). Not only the queues waited for now: a receiver
        # receives before it waits, so a ring between its send_mark and its wait is kept.
        if name in self._registered or any(name in n for n, _ in tuple(self._wakers.values())):
            self._wake_local(name, 1)

    def _wake_local(self, name: str, count: int) -> None:
        # One waiter per message: the others would find nothing to receive.
        if count:
            with self._sent_lock:
                self._send_marks[name] = self._send_marks.get(name, 0) + 1
                if name in self._sent:
                    self._sent[name].notify(count)
                for names, wake in self._wakers.values():
                    if name in names:
                        wake(name)

    def _now_us(self) -> int:
        return to_us(self._clock.now())

    def _entity(self, queue: str, dead_letter: bool) -> tuple[str, bool, QueueProperties]:
        if not isinstance(queue, str) or not queue:
            raise ValueError(f"queue: must be a non-empty string, got {queue!r}")
        name = queue.lower()
        if name.endswith(DEAD_LETTER_SUFFIX):
            name, dead_letter = name[: -len(DEAD_LETTER_SUFFIX)], True
        props = self._catalog.resolve(name)
        if props is None:
            raise MessagingEntityNotFoundError(
                queue,
                "declare it under 'queues' in infra/queues.json, or use a client reply queue "
                f"name matching {self._catalog.reply_queue_pattern!r}"
                + (f" or a client submit queue name matching "
                   f"{self._catalog.submit_queue_pattern!r}"
                   if self._catalog.submit_queue_pattern else "")
                + (f"; client queues exist only for the declared clients "
                   f"{sorted(self._catalog.client_ids)} (the host's ORDER_CLIENTS, as "
                   "Bicep creates them from its clients parameter)"
                   if self._catalog.client_ids is not None else ""),
            )
        return name, dead_letter, props

    def _register(self, conn: sqlite3.Connection, name: str, now: int) -> None:
        # Inside the operation's transaction; the caller notes the name in _registered only
        # once it committed (a rolled-back batch runs the operation again, see GroupCommit).
        if name not in self._registered:  # declared queues were registered at open
            conn.execute(
                "INSERT OR IGNORE INTO queues (name, created_us) VALUES (?, ?)", (name, now)
            )

    def _known_names(self) -> list[str]:
        with self._lock:
            found = self._conn.execute("SELECT name FROM queues ORDER BY name").fetchall()
        return [row["name"] for row in found if self._catalog.resolve(row["name"]) is not None]

    def _write_held(self, conn: sqlite3.Connection, queue: str, lock_token: str,
                    change: str, args: tuple[Any, ...] = ()) -> sqlite3.Row:
        """Change the message that holds ``lock_token`` in one statement; return its row.

        ``change`` is ``DELETE FROM messages`` or ``UPDATE messages SET ...`` (``args``: the
        SET's values); it applies only where :meth:`_held` would return the row (the lock
        token on ``queue``, not expired), and the row returned is the one changed (RETURNING:
        new values for an UPDATE). Else nothing changes and :meth:`_held` raises its
        MessageLockLostError: a read only for a lost lock, not for every settlement.
        """
        name, dead_letter = self._lock_target(queue, lock_token)
        now = self._now_us()
        row: sqlite3.Row | None = conn.execute(
            f"{change} WHERE lock_token = ? AND queue = ? AND dead_letter = ?"
            " AND locked_until_us > ? RETURNING *",
            (*args, lock_token, name, int(dead_letter), now)).fetchone()
        if row is None:
            self._held(conn, queue, lock_token, now)  # the same instant: it raises
            raise AssertionError("a lock _held accepts was refused by the same transaction")
        return row

    def _lock_target(self, queue: str, lock_token: str) -> tuple[str, bool]:
        if not isinstance(lock_token, str) or not lock_token:
            raise ValueError(f"lock_token: must be a non-empty string, got {lock_token!r}")
        name, dead_letter, _ = self._entity(queue, False)
        return name, dead_letter

    def _held(self, conn: sqlite3.Connection, queue: str, lock_token: str,
              now: int | None = None) -> sqlite3.Row:
        name, dead_letter = self._lock_target(queue, lock_token)
        row: sqlite3.Row | None = conn.execute(
            "SELECT * FROM messages WHERE lock_token = ?", (lock_token,)).fetchone()
        if row is None:
            raise MessageLockLostError(
                lock_token,
                "no message holds this lock: it was settled already, or the lock expired and "
                "the message was received again under a new lock token",
            )
        if row["queue"] != name or bool(row["dead_letter"]) != dead_letter:
            held_on = row["queue"] + (DEAD_LETTER_SUFFIX if row["dead_letter"] else "")
            raise MessageLockLostError(lock_token, f"lock is held on {held_on!r}, not {queue!r}")
        if row["locked_until_us"] <= (self._now_us() if now is None else now):
            raise MessageLockLostError(
                lock_token, f"lock expired at {from_us(row['locked_until_us']).isoformat()}"
            )
        return row
