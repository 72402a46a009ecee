"""The task hub's activity work queue: claim with a lease, renew, settle.

:meth:`ActivityQueue.settle_and_claim_activities` records finished activities and leases
the next in one transaction: one commit (one fsync) per round, not per claim and completion.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlitekit as db
from devhost.taskhub.events import format_time, parse_time
from devhost.taskhub.host_failure_log import activity_key, clear_host_failures
from devhost.taskhub.hub_file import HubPart
from devhost.taskhub.records import ActivityWorkItem, NewMessage

Completion = tuple[ActivityWorkItem, dict[str, Any]]
"""A finished activity and its TaskCompleted/TaskFailed event."""


class ActivityQueue(HubPart):
    """Activity work items of a task hub (see :class:`~devhost.taskhub.store.TaskHub`)."""

    def claim_activities(self, owner: str, lease: timedelta,
                         max_count: int = 1) -> list[ActivityWorkItem]:
        """Lease up to ``max_count`` items whose lease is free or expired, for ``lease``."""
        return self.settle_and_claim_activities([], owner, lease, max_count)[1]

    def complete_activities(self, done: list[Completion]) -> list[bool]:
        """Record activities' TaskCompleted/TaskFailed events, in one transaction.

        An item already gone (finished by another worker after this lease expired) writes nothing,
        so the orchestration sees one completion per task; returns per item whether this call
        recorded it.
        """
        return self.settle_and_claim_activities(done, "", timedelta(0), 0)[0]

    def settle_and_claim_activities(self, done: list[Completion], owner: str,
                                    lease: timedelta, max_count: int
                                    ) -> tuple[list[bool], list[ActivityWorkItem]]:
        """Record finished activities and lease up to ``max_count`` more, in one transaction."""
        now = self.clock.now()
        stamp = format_time(now)
        conn = self._conn()
        if not done and (max_count <= 0 or not self._any_claimable(conn, stamp)):
            return [], []  # nothing to write: no turn at the write lock
        messages = self._completion_rows(done, now)
        with db.write(conn):
            recorded = self._settle(conn, done, messages)
            rows = self._claim_activity_rows(conn, owner, stamp, format_time(now + lease),
                                             max_count)
        return recorded, self._activity_items(rows, owner)

    # These run inside a caller's write transaction (also TaskHub.run_round); all but the
    # SQL is prepared before it, to hold the write lock briefly.
    def _completion_rows(self, done: list[Completion], now: datetime) -> list[tuple[Any, ...]]:
        return [self._message_row(NewMessage(item.instance_id, item.execution_id,
                                             "completion", result, now))
                for item, result in done]

    def _settle(self, conn: sqlite3.Connection, done: list[Completion],
                messages: list[tuple[Any, ...]]) -> list[bool]:
        """Delete the finished items still there and queue their results: two statements."""
        _, deleted = db.run_for_each(conn, "DELETE FROM activities WHERE id IN (?) RETURNING id",
                                     (), [item.id for item, _ in done])
        # An item given twice (run again after its lease ran out) is recorded once.
        recorded = db.first_of_each([item.id for item, _ in done], {r[0] for r in deleted})
        db.insert_rows(conn, self.INSERT_MESSAGES,
                       [m for m, kept in zip(messages, recorded, strict=True) if kept])
        clear_host_failures(conn, self.file, [activity_key(item.id) for (item, _), kept
                                   in zip(done, recorded, strict=True) if kept])
        return recorded

    def _claim_activity_rows(self, conn: sqlite3.Connection, owner: str, stamp: str,
                             expires: str, max_count: int) -> list[sqlite3.Row]:
        """Lease the oldest ``max_count`` claimable items and return their rows: one statement."""
        if max_count <= 0:
            return []
        # With whether a host failure was counted for it (by any process): its success clears that.
        rows = conn.execute(
            "UPDATE activities SET lock_owner=?, lock_expires=?, dequeue_count=dequeue_count+1"
            " WHERE id IN (SELECT id FROM activities WHERE lock_expires <= ? ORDER BY id"
            " LIMIT ?) RETURNING *, EXISTS (SELECT 1 FROM host_failures f"
            " WHERE f.work = 'activity:' || id) AS host_failed",
            (owner, expires, stamp, max_count)).fetchall()
        rows.sort(key=lambda r: r["id"])
        self.file.saw_host_failures([activity_key(r["id"]) for r in rows if r["host_failed"]])
        return rows

    @staticmethod
    def _activity_items(rows: list[sqlite3.Row], owner: str) -> list[ActivityWorkItem]:
        return [ActivityWorkItem(r["id"], r["instance_id"], r["execution_id"], r["task_id"],
                                 r["name"], r["input"], r["dequeue_count"], owner)
                for r in rows]

    @staticmethod
    def _any_claimable(conn: sqlite3.Connection, stamp: str) -> bool:
        # Outside any transaction (WAL: never blocked); a false "no" is retried next poll.
        return conn.execute("SELECT 1 FROM activities WHERE lock_expires <= ? LIMIT 1",
                            (stamp,)).fetchone() is not None

    def release_activities(self, items: list[ActivityWorkItem]) -> None:
        """Give up claims on activities that were never started: claimable again at once."""
        if not items:
            return
        stamp = format_time(self.clock.now())
        with db.write(self._conn()) as conn:
            conn.executemany(
                "UPDATE activities SET lock_owner=NULL, lock_expires=?,"
                " dequeue_count=MAX(dequeue_count-1, 0) WHERE id=? AND lock_owner=?",
                [(stamp, item.id, item.lock_owner) for item in items])

    def renew_activities(self, items: list[ActivityWorkItem], lease: timedelta) -> list[bool]:
        """Extend activity leases in one transaction; False per item another worker now holds."""
        if not items:
            return []
        expires = format_time(self.clock.now() + lease)
        with db.write(self._conn()) as conn:
            return [conn.execute(
                "UPDATE activities SET lock_expires=? WHERE id=? AND lock_owner=?",
                (expires, item.id, item.lock_owner)).rowcount == 1 for item in items]

    def leased_activities(self, limit: int = 20) -> list[LeasedActivity]:
        """Return activities whose lease has not expired: running, or left by a stopped host.

        At most ``limit``, the oldest first; one range read of ``ix_activities_lock``. A
        stopped host's running activity keeps its lease until ``lock_expires`` and runs
        again, from the start, once that passes (``docs/local-host.md``, "Stopping").
        """
        rows = self._conn().execute(
            "SELECT name, instance_id, lock_expires FROM activities WHERE lock_expires > ?"
            " AND lock_owner IS NOT NULL ORDER BY lock_expires LIMIT ?",
            (self._now(), limit)).fetchall()
        return [LeasedActivity(r["name"], r["instance_id"], parse_time(r["lock_expires"]))
                for r in rows]


@dataclass(frozen=True)
class LeasedActivity:
    """An activity work item under a lease: its function, its instance, when the lease ends."""

    name: str
    instance_id: str
    lock_expires: datetime
