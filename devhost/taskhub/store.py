"""Durable state of the task hub: every read and every atomic write the host makes.

All writes are single IMMEDIATE transactions (:func:`devhost.sqlite.write`), so an episode's
new history, the messages it consumed and the work it schedules commit together or not at
all (SPEC D3). Work is claimed with leases that expire, so a host process killed at any point
leaves nothing that another process, or a restart, cannot finish. Claims and commits take
batches: one transaction (one fsync) serves several episodes or activities.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from devhost import sqlite as db
from devhost.taskhub.events import EventType, event, format_time, parse_time
from devhost.taskhub.instances import InstanceStore
from devhost.taskhub.records import (  # noqa: F401 - re-exported for callers
    ALL_STATUSES,
    TERMINAL_STATUSES,
    ActivityWorkItem,
    EpisodeCommit,
    InboxMessage,
    InstanceExistsError,
    InstanceGoneError,
    InstanceNotFoundError,
    InstanceRecord,
    NewActivity,
    NewInstance,
    NewMessage,
    OrchestrationWorkItem,
    TaskHubError,
    empty_replay_state,
)


class TaskHub(InstanceStore):
    """The task hub in one SQLite file, safe for many threads and many processes.

    Parameters are those of :class:`~devhost.taskhub.instances.InstanceStore`.
    """

    def claim_orchestrations(self, owner: str, lease: timedelta, max_instances: int = 1,
                             max_messages: int = 10_000) -> list[OrchestrationWorkItem]:
        """Lease up to ``max_instances`` instances that have visible messages.

        One transaction claims them all; their histories and messages are read after it.

        Parameters
        ----------
        owner : str
            The claiming worker's id (LockedBy of the lease).
        lease : timedelta
            How long the claim holds; an episode must commit within it, else another
            worker may take the instance over (and this one's commit is refused).
        max_instances : int
            Batch size.
        max_messages : int
            At most this many messages per instance are returned.

        Returns
        -------
        list of OrchestrationWorkItem
            Empty when no instance has visible work.
        """
        now = self._now()
        conn = self._conn()
        with db.write(conn):
            ids = [r["instance_id"] for r in conn.execute(
                "SELECT DISTINCT i.instance_id FROM inbox m JOIN instances i USING (instance_id)"
                " WHERE m.visible_at <= ? AND (i.lock_owner IS NULL OR i.lock_expires < ?)"
                " AND (i.runtime_status != 'Suspended' OR m.kind IN ('resume','terminate'))"
                " ORDER BY m.visible_at, m.id LIMIT ?", (now, now, max_instances))]
            if not ids:
                return []
            expires = format_time(self.clock.now() + lease)
            conn.executemany(
                "UPDATE instances SET lock_owner=?, lock_expires=? WHERE instance_id=?",
                [(owner, expires, i) for i in ids])
        items = []
        for instance_id in ids:
            messages = [
                InboxMessage(r["id"], r["kind"], r["execution_id"], r["timer_id"],
                             json.loads(r["event"]))
                for r in conn.execute(
                    "SELECT id, kind, execution_id, timer_id, event FROM inbox"
                    " WHERE instance_id=? AND visible_at <= ? ORDER BY visible_at, id LIMIT ?",
                    (instance_id, now, max_messages))
            ]
            items.append(OrchestrationWorkItem(
                self._get(conn, instance_id), [], messages, owner,
                history_json=self.get_history_json(instance_id)))
        return items

    def claim_orchestration(self, owner: str, lease: timedelta,
                            max_messages: int = 10_000) -> OrchestrationWorkItem | None:
        """Lease one instance (see :meth:`claim_orchestrations`); None when idle."""
        items = self.claim_orchestrations(owner, lease, 1, max_messages)
        return items[0] if items else None

    def release_orchestration(self, item: OrchestrationWorkItem) -> None:
        """Give up a claim without writing anything (the messages stay queued)."""
        with db.write(self._conn()) as conn:
            conn.execute("UPDATE instances SET lock_owner=NULL, lock_expires=NULL"
                         " WHERE instance_id=? AND lock_owner=?",
                         (item.instance.instance_id, item.lock_owner))

    def commit_episodes(self, batch: list[tuple[OrchestrationWorkItem, EpisodeCommit]]
                        ) -> list[bool]:
        """Write several episodes' results in one transaction and release the instances.

        Each episode's history, consumed messages and scheduled work commit together with
        the others or not at all (SPEC D3); one fsync serves the whole batch.

        Returns
        -------
        list of bool
            Per episode: False, with nothing of it written, if its lease was lost.
        """
        now = self.clock.now()
        with db.write(self._conn()) as conn:
            return [self._commit_one(conn, item, commit, now) for item, commit in batch]

    def commit_episode(self, item: OrchestrationWorkItem, commit: EpisodeCommit) -> bool:
        """Write one episode's results atomically (see :meth:`commit_episodes`)."""
        return self.commit_episodes([(item, commit)])[0]

    def _commit_one(self, conn: Any, item: OrchestrationWorkItem, commit: EpisodeCommit,
                    now: datetime) -> bool:
        inst = item.instance
        held = conn.execute(
            "SELECT 1 FROM instances WHERE instance_id=? AND lock_owner=?"
            " AND execution_id=?", (inst.instance_id, item.lock_owner,
                                    inst.execution_id)).fetchone()
        if held is None:
            return False
        gone = commit.consumed + commit.dropped
        if gone:
            conn.executemany("DELETE FROM inbox WHERE id=?", [(i,) for i in gone])
        if commit.reset_history:
            conn.execute("DELETE FROM history WHERE instance_id=?", (inst.instance_id,))
            start = 0
        else:
            start = conn.execute(
                "SELECT COALESCE(MAX(position)+1, 0) FROM history WHERE instance_id=?",
                (inst.instance_id,)).fetchone()[0]
        conn.executemany(
            "INSERT INTO history (instance_id, position, event) VALUES (?,?,?)",
            [(inst.instance_id, start + k, json.dumps(e))
             for k, e in enumerate(commit.new_history)])
        execution_id = commit.execution_id or inst.execution_id
        if commit.purge_execution:
            conn.execute("DELETE FROM inbox WHERE instance_id=? AND execution_id=?",
                         (inst.instance_id, inst.execution_id))
            conn.execute("DELETE FROM activities WHERE instance_id=? AND execution_id=?",
                         (inst.instance_id, inst.execution_id))
        if commit.cancel_timers:
            conn.executemany(
                "DELETE FROM inbox WHERE instance_id=? AND execution_id=? AND timer_id=?",
                [(inst.instance_id, inst.execution_id, t) for t in commit.cancel_timers])
        conn.executemany(
            "INSERT OR IGNORE INTO activities (instance_id, execution_id, task_id, name,"
            " input, lock_expires) VALUES (?,?,?,?,?,?)",
            [(inst.instance_id, execution_id, a.task_id, a.name, a.input, format_time(now))
             for a in commit.activities])
        for m in commit.messages:
            self._insert_message(conn, m)
        for child in commit.instances:
            existing = conn.execute(
                "SELECT runtime_status FROM instances WHERE instance_id=?",
                (child.instance_id,)).fetchone()
            if existing is not None and existing["runtime_status"] in TERMINAL_STATUSES:
                self._delete_instance(conn, child.instance_id)
                existing = None
            if existing is None:
                self._insert_instance(conn, child, parent=(inst.instance_id, execution_id))
            else:
                failed = event(
                    EventType.SubOrchestrationInstanceFailed, now,
                    TaskScheduledId=child.parent_task_id,
                    Reason=f"An instance with ID '{child.instance_id}' already exists.",
                    Details=None)
                self._insert_message(conn, NewMessage(inst.instance_id, execution_id,
                                                      "completion", failed, now))
        conn.execute(
            "UPDATE instances SET runtime_status=COALESCE(?, runtime_status),"
            " output=COALESCE(?, output), custom_status=?, execution_id=?,"
            " input=COALESCE(?, input), replay_state=COALESCE(?, replay_state),"
            " last_updated_at=?, lock_owner=NULL, lock_expires=NULL WHERE instance_id=?",
            (commit.status, commit.output, commit.custom_status, execution_id,
             commit.input, json.dumps(commit.replay_state) if commit.replay_state else None,
             format_time(now), inst.instance_id))
        return True

    # ----------------------------------------------------------------- activity work
    def claim_activities(self, owner: str, lease: timedelta,
                         max_count: int = 1) -> list[ActivityWorkItem]:
        """Lease up to ``max_count`` activity work items whose lease is free or expired.

        Parameters
        ----------
        owner : str
            The claiming worker's id.
        lease : timedelta
            How long the claim holds before another worker may take the item.
        max_count : int
            Batch size.

        Returns
        -------
        list of ActivityWorkItem
            Possibly empty.
        """
        now = self.clock.now()
        conn = self._conn()
        with db.write(conn):
            rows = conn.execute(
                "SELECT * FROM activities WHERE lock_expires <= ? ORDER BY id LIMIT ?",
                (format_time(now), max_count)).fetchall()
            if not rows:
                return []
            expires = format_time(now + lease)
            conn.executemany(
                "UPDATE activities SET lock_owner=?, lock_expires=?,"
                " dequeue_count=dequeue_count+1 WHERE id=?",
                [(owner, expires, r["id"]) for r in rows])
        return [ActivityWorkItem(r["id"], r["instance_id"], r["execution_id"], r["task_id"],
                                 r["name"], r["input"], r["dequeue_count"] + 1, owner)
                for r in rows]

    def renew_activity(self, item: ActivityWorkItem, lease: timedelta) -> bool:
        """Extend an activity lease; False if another worker holds it now."""
        with db.write(self._conn()) as conn:
            cur = conn.execute("UPDATE activities SET lock_expires=? WHERE id=? AND lock_owner=?",
                               (format_time(self.clock.now() + lease), item.id,
                                item.lock_owner))
            return cur.rowcount == 1

    def complete_activities(self, done: list[tuple[ActivityWorkItem, dict[str, Any]]]
                            ) -> list[bool]:
        """Record activities' TaskCompleted/TaskFailed events, in one transaction.

        Each work item is deleted and its event queued together. An item that is gone
        (another worker finished it after this one's lease expired) writes nothing: the
        orchestration sees exactly one completion per task.

        Returns
        -------
        list of bool
            Per item: True if this call recorded its completion.
        """
        now = self.clock.now()
        recorded = []
        with db.write(self._conn()) as conn:
            for item, result in done:
                cur = conn.execute("DELETE FROM activities WHERE id=?", (item.id,))
                if cur.rowcount == 1:
                    self._insert_message(conn, NewMessage(item.instance_id, item.execution_id,
                                                          "completion", result, now))
                recorded.append(cur.rowcount == 1)
        return recorded

    def complete_activity(self, item: ActivityWorkItem, result: dict[str, Any]) -> bool:
        """Record one activity's completion (see :meth:`complete_activities`)."""
        return self.complete_activities([(item, result)])[0]

    # ----------------------------------------------------------------- scheduling helpers
    def next_due(self) -> datetime | None:
        """Return the earliest time at which queued work becomes visible, or None if idle."""
        conn = self._conn()
        times = [
            conn.execute("SELECT MIN(visible_at) FROM inbox m JOIN instances i"
                         " USING (instance_id) WHERE i.runtime_status != 'Suspended'"
                         " OR m.kind IN ('resume','terminate')").fetchone()[0],
            conn.execute("SELECT MIN(lock_expires) FROM activities").fetchone()[0],
        ]
        due = [parse_time(t) for t in times if t]
        return min(due) if due else None

    def try_lease(self, name: str, owner: str, duration: timedelta) -> bool:
        """Take a named lease (timer-trigger occurrence, singleton) if free or expired.

        Returns
        -------
        bool
            True if ``owner`` holds the lease now.
        """
        now = self.clock.now()
        with db.write(self._conn()) as conn:
            conn.execute("DELETE FROM leases WHERE expires < ?", (format_time(now),))
            row = conn.execute("SELECT owner, expires FROM leases WHERE name=?",
                               (name,)).fetchone()
            if row is not None and row["owner"] != owner and parse_time(row["expires"]) > now:
                return False
            conn.execute("INSERT OR REPLACE INTO leases (name, owner, expires) VALUES (?,?,?)",
                         (name, owner, format_time(now + duration)))
            return True
