"""The task hub's count of host-side failures per piece of work (L3).

Work the host itself failed to run (:mod:`devhost.failures.host_failures`) is counted in
``host_failures`` (key ``episode:<instance id>`` or ``activity:<work item id>``) and held
back for the policy's pause: no busy loop, and the count holds across processes. A
successful commit clears it (:func:`clear_host_failures`, inside the writing transaction),
only where a count was recorded: the process that counts a failure remembers it, and a
claim reads whether the work it takes has a count (another process's), so a commit of work
that never failed in the host writes nothing here.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

import sqlitekit as db
from devhost.failures.host_failures import HostRetryPolicy
from devhost.taskhub.events import format_time
from devhost.taskhub.hub_file import HubFile, HubPart
from devhost.taskhub.records import ActivityWorkItem, NewMessage, OrchestrationWorkItem


def episode_key(instance_id: str) -> str:
    """Return the ``host_failures`` key of an instance's episodes."""
    return f"episode:{instance_id}"


def activity_key(item_id: int) -> str:
    """Return the ``host_failures`` key of an activity work item."""
    return f"activity:{item_id}"


def clear_host_failures(conn: sqlite3.Connection, file: HubFile, keys: list[str]) -> None:
    """Forget the counts of work that succeeded, inside the caller's write transaction.

    Only keys ``file`` knows have a count (:meth:`HubFile.take_host_failures`) are deleted.
    """
    _delete_counts(conn, file.take_host_failures(keys))


def _delete_counts(conn: sqlite3.Connection, keys: list[str]) -> None:
    if keys:
        conn.executemany("DELETE FROM host_failures WHERE work=?", [(k,) for k in keys])


class HostFailureLog(HubPart):
    """Count host-side failures and hold failed work back (a part of the task hub)."""

    def note_episode_failure(self, item: OrchestrationWorkItem, error: str,
                             policy: HostRetryPolicy) -> int:
        """Count a host-side failure of a claimed instance's episode; return the count in a row.

        Unless the policy gives up, the lease is extended to the end of its pause (messages stay
        queued); when it gives up the lease is left for the caller to commit the failure.
        ``error`` is ``"<ExceptionType>: <message>"``.
        """
        now = self.clock.now()
        instance_id = item.instance.instance_id
        with db.write(self._conn()) as conn:
            attempts = self._count_failure(conn, episode_key(instance_id), error, now)
            self.file.saw_host_failures([episode_key(instance_id)])
            if not policy.gives_up(attempts):
                conn.execute(
                    "UPDATE instances SET lock_expires=? WHERE instance_id=? AND lock_owner=?",
                    (format_time(now + policy.backoff(attempts)), instance_id,
                     item.lock_owner))
        return attempts

    def note_activity_failure(self, item: ActivityWorkItem, error: str,
                              policy: HostRetryPolicy) -> int:
        """Count an activity host failure, return the count; unless given up, hold it back."""
        now = self.clock.now()
        with db.write(self._conn()) as conn:
            attempts = self._count_failure(conn, activity_key(item.id), error, now)
            self.file.saw_host_failures([activity_key(item.id)])
            if not policy.gives_up(attempts):
                conn.execute(
                    "UPDATE activities SET lock_owner=NULL, lock_expires=? WHERE id=?"
                    " AND lock_owner=?",
                    (format_time(now + policy.backoff(attempts)), item.id, item.lock_owner))
        return attempts

    def force_fail(self, item: OrchestrationWorkItem, output_json: str,
                   parent_event: dict[str, Any] | None) -> bool:
        """End a claimed instance as Failed without an episode commit (last resort, L3).

        When even the ending commit cannot be written: in one transaction its queued messages and
        activities are deleted, status and output set, its parent sent ``parent_event`` and its
        count cleared. False, with nothing written, if the lease was lost.
        """
        inst = item.instance
        now = self.clock.now()
        with db.write(self._conn()) as conn:
            held = conn.execute("UPDATE instances SET runtime_status='Failed', output=?,"
                                " last_updated_at=?, lock_owner=NULL, lock_expires=NULL"
                                " WHERE instance_id=? AND lock_owner=? AND execution_id=?",
                                (output_json, format_time(now), inst.instance_id,
                                 item.lock_owner, inst.execution_id)).rowcount == 1
            if not held:
                return False
            for table in ("inbox", "activities"):
                conn.execute(f"DELETE FROM {table} WHERE instance_id=?", (inst.instance_id,))
            _delete_counts(conn, [episode_key(inst.instance_id)])
            if parent_event is not None and inst.parent_instance_id:
                self._insert_message(conn, NewMessage(
                    inst.parent_instance_id, inst.parent_execution_id, "completion",
                    parent_event, now))
        return True

    def host_failure_count(self, work: str) -> int:
        """Return the host-side failures in a row recorded for ``work`` (0 if none)."""
        row = self._conn().execute("SELECT attempts FROM host_failures WHERE work=?",
                                   (work,)).fetchone()
        return row[0] if row else 0

    @staticmethod
    def _count_failure(conn: sqlite3.Connection, work: str, error: str,
                       now: datetime) -> int:
        conn.execute(
            "INSERT INTO host_failures (work, attempts, last_error, updated_at)"
            " VALUES (?, 1, ?, ?) ON CONFLICT (work) DO UPDATE SET"
            " attempts = attempts + 1, last_error = excluded.last_error,"
            " updated_at = excluded.updated_at", (work, error, format_time(now)))
        return conn.execute("SELECT attempts FROM host_failures WHERE work=?",
                            (work,)).fetchone()[0]
