"""Durable entities in the task hub: requests, state and leases, in SQLite (D10).

Requests are inbox rows (kind ``entity``) to the scheduler id, inserted in the sender's
transaction. A process leases an entity, runs its oldest requests as one batch and commits
in one transaction (requests deleted, state written, responses and signals queued): one
operation at a time, in arrival order; a killed batch reruns from the last committed state.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlitekit as db
from devhost.taskhub.entity_messages import (
    REQUEST_KIND,
    parse_scheduler_id,
    request_event,
    request_message,
    scheduler_id,
)
from devhost.taskhub.events import format_time, parse_time
from devhost.taskhub.hub_file import HubPart
from devhost.taskhub.records import NewMessage


@dataclass(frozen=True)
class EntityWorkItem:
    """A claimed entity ``@name@key``: its state before the batch, its (inbox id, request) pairs."""

    entity_id: str
    exists: bool
    state: str | None
    requests: list[tuple[int, dict[str, Any]]]
    lock_owner: str

    @property
    def name(self) -> str:
        """Return the entity name (lower-case)."""
        return parse_scheduler_id(self.entity_id)[0]

    @property
    def key(self) -> str:
        """Return the entity key."""
        return parse_scheduler_id(self.entity_id)[1]


@dataclass
class EntityCommit:
    """What one batch writes: the entity's new state and the messages it sends."""

    item: EntityWorkItem
    exists: bool
    state: str | None
    messages: list[NewMessage] = field(default_factory=list)


_CLAIMABLE = (
    "FROM inbox m LEFT JOIN entities e ON e.entity_id = m.instance_id"
    " WHERE m.kind = 'entity' AND m.visible_at <= ?"
    " AND (e.lock_owner IS NULL OR e.lock_expires < ?)")


class EntityQueue(HubPart):
    """Entity operations of a task hub (see :class:`~devhost.taskhub.store.TaskHub`)."""

    def signal_entity(self, name: str, key: str, operation: str,
                      input_text: str | None) -> str:
        """Queue a client's one-way operation (``input_text`` as the extension builds it)."""
        now = self.clock.now()
        message = request_message(operation, input_text, signal=True, parent=None,
                                  parent_execution=None, now=now)
        with db.write(self._conn()) as conn:
            self._insert_message(conn, NewMessage(scheduler_id(name, key), None, REQUEST_KIND,
                                                  request_event(message, now), now))
        return message["id"]

    def read_entity(self, name: str, key: str) -> tuple[bool, str | None]:
        """Return whether the entity exists and its serialised state (committed batches)."""
        row = self._conn().execute(
            "SELECT entity_exists, state FROM entities WHERE entity_id=?",
            (scheduler_id(name, key),)).fetchone()
        if row is None or not row["entity_exists"]:
            return False, None
        return True, row["state"]

    def list_entities(self, name: str, *, top: int = 100, continuation: str | None = None
                      ) -> tuple[list[tuple[str, str, str, str | None]], str | None]:
        """List existing entities of ``name`` (any case, lowered as ``EntityId``), oldest first.

        Returns (name, key, last_modified, state) rows and the next page's ``continuation`` or None.
        """
        prefix = scheduler_id(name, "")
        rows = self._conn().execute(
            "SELECT entity_id, last_modified, state FROM entities WHERE entity_exists=1"
            " AND substr(entity_id, 1, ?) = ? AND entity_id > ? ORDER BY entity_id LIMIT ?",
            (len(prefix), prefix, continuation or "", top + 1)).fetchall()
        page = [(name.lower(), r["entity_id"][len(prefix):], r["last_modified"], r["state"])
                for r in rows[:top]]
        token = rows[top - 1]["entity_id"] if len(rows) > top else None
        return page, token

    def claim_entities(self, owner: str, lease: timedelta, max_entities: int,
                       batch_size: int) -> list[EntityWorkItem]:
        """Lease up to ``max_entities`` entities with queued requests, oldest request first.

        ``batch_size``: host.json ``maxEntityOperationBatchSize``; commit within ``lease``.
        """
        now = self.clock.now()
        stamp = format_time(now)
        conn = self._conn()
        if conn.execute(f"SELECT 1 {_CLAIMABLE} LIMIT 1", (stamp, stamp)).fetchone() is None:
            return []  # nothing to claim: no turn at the write lock
        with db.write(conn):
            ids = [r[0] for r in conn.execute(
                f"SELECT m.instance_id {_CLAIMABLE} GROUP BY m.instance_id"
                " ORDER BY MIN(m.id) LIMIT ?", (stamp, stamp, max_entities))]
            expires = format_time(now + lease)
            conn.executemany(
                "INSERT INTO entities (entity_id, last_modified, lock_owner, lock_expires)"
                " VALUES (?,?,?,?) ON CONFLICT (entity_id) DO UPDATE SET"
                " lock_owner=excluded.lock_owner, lock_expires=excluded.lock_expires",
                [(i, stamp, owner, expires) for i in ids])
        return [self._load_entity(conn, i, owner, stamp, batch_size) for i in ids]

    @staticmethod
    def _load_entity(conn: sqlite3.Connection, entity_id: str, owner: str, stamp: str,
                     batch_size: int) -> EntityWorkItem:
        row = conn.execute("SELECT entity_exists, state FROM entities WHERE entity_id=?",
                           (entity_id,)).fetchone()
        requests = [(r["id"], json.loads(json.loads(r["event"])["Input"]))
                    for r in conn.execute(
                        "SELECT id, event FROM inbox WHERE instance_id=? AND kind='entity'"
                        " AND visible_at <= ? ORDER BY id LIMIT ?",
                        (entity_id, stamp, batch_size))]
        return EntityWorkItem(entity_id, bool(row["entity_exists"]), row["state"], requests,
                              owner)

    def commit_entities(self, commits: list[EntityCommit]) -> list[bool]:
        """Write batches in one transaction; False per batch whose lease was lost."""
        stamp = format_time(self.clock.now())
        rows = [[self._message_row(m) for m in c.messages] for c in commits]
        with db.write(self._conn()) as conn:
            return [self._commit_entity(conn, c, r, stamp)
                    for c, r in zip(commits, rows, strict=True)]

    def _commit_entity(self, conn: sqlite3.Connection, commit: EntityCommit,
                       messages: list[tuple[Any, ...]], stamp: str) -> bool:
        item = commit.item
        held = conn.execute("SELECT 1 FROM entities WHERE entity_id=? AND lock_owner=?",
                            (item.entity_id, item.lock_owner)).fetchone()
        if held is None:
            return False
        conn.executemany("DELETE FROM inbox WHERE id=?", [(i,) for i, _ in item.requests])
        conn.executemany(self.INSERT_MESSAGE, messages)
        conn.execute("UPDATE entities SET entity_exists=?, state=?, last_modified=?,"
                     " lock_owner=NULL, lock_expires=NULL WHERE entity_id=?",
                     (int(commit.exists), commit.state, stamp, item.entity_id))
        return True

    def next_entity_due(self) -> datetime | None:
        """Return when an entity request can next be claimed (now if one can), or None."""
        value = self._conn().execute(
            "SELECT MIN(CASE WHEN e.lock_owner IS NOT NULL AND e.lock_expires > m.visible_at"
            " THEN e.lock_expires ELSE m.visible_at END)"
            " FROM inbox m LEFT JOIN entities e ON e.entity_id = m.instance_id"
            " WHERE m.kind = 'entity'").fetchone()[0]
        return parse_time(value) if value else None
