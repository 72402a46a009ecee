"""Durable state of the task hub: every read and every atomic write the host makes.

All writes are single IMMEDIATE transactions (:func:`devhost.sqlite.write`), so an episode's
new history, the messages it consumed and the work it schedules commit together or not at
all (SPEC D3). Work is claimed with leases that expire, so a host process killed at any point
leaves nothing that another process, or a restart, cannot finish.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from devhost import sqlite as db
from devhost.clock import Clock
from devhost.taskhub.events import EventType, event, format_time, parse_time
from devhost.taskhub.schema import SCHEMA

TERMINAL_STATUSES = frozenset({"Completed", "Failed", "Terminated"})
"""Runtime statuses after which an instance accepts no more events (HTTP 410 Gone)."""

ALL_STATUSES = ("Pending", "Running", "Completed", "ContinuedAsNew", "Failed", "Terminated",
                "Suspended")
"""Runtime status names as the Durable Functions HTTP API reports them."""


class TaskHubError(Exception):
    """Base error of the task hub; ``status`` is the HTTP status the API answers with."""

    status = 400


class InstanceNotFoundError(TaskHubError):
    """No instance has that id (HTTP 404)."""

    status = 404


class InstanceGoneError(TaskHubError):
    """The instance is completed, failed or terminated (HTTP 410)."""

    status = 410


class InstanceExistsError(TaskHubError):
    """A non-terminal instance with that id exists already (HTTP 409)."""

    status = 409


@dataclass(frozen=True)
class InstanceRecord:
    """One orchestration instance as stored.

    Attributes
    ----------
    instance_id, name : str
        Instance id (SPEC D2) and orchestrator function name.
    runtime_status : str
        One of :data:`ALL_STATUSES`.
    input, output, custom_status : str or None
        JSON texts.
    created_at, last_updated_at : datetime
        UTC times.
    execution_id : str
        Id of the current execution (changes on continue-as-new).
    parent_instance_id : str or None
        Set for sub-orchestrations.
    """

    instance_id: str
    name: str
    runtime_status: str
    input: str | None
    output: str | None
    custom_status: str | None
    created_at: datetime
    last_updated_at: datetime
    execution_id: str
    parent_instance_id: str | None
    parent_execution_id: str | None
    parent_task_id: int | None
    version: str | None
    replay_state: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> InstanceRecord:
        """Build a record from an ``instances`` row."""
        return cls(
            instance_id=row["instance_id"], name=row["name"],
            runtime_status=row["runtime_status"], input=row["input"], output=row["output"],
            custom_status=row["custom_status"], created_at=parse_time(row["created_at"]),
            last_updated_at=parse_time(row["last_updated_at"]),
            execution_id=row["execution_id"], parent_instance_id=row["parent_instance_id"],
            parent_execution_id=row["parent_execution_id"],
            parent_task_id=row["parent_task_id"], version=row["version"],
            replay_state=json.loads(row["replay_state"]),
        )


@dataclass(frozen=True)
class InboxMessage:
    """A history event waiting for the instance's next episode."""

    id: int
    kind: str
    execution_id: str | None
    timer_id: int | None
    event: dict[str, Any]


@dataclass(frozen=True)
class OrchestrationWorkItem:
    """What one episode needs: the instance, its history and its visible messages."""

    instance: InstanceRecord
    history: list[dict[str, Any]]
    messages: list[InboxMessage]
    lock_owner: str


@dataclass(frozen=True)
class ActivityWorkItem:
    """A claimed activity execution (``dequeue_count`` counts deliveries, from 1)."""

    id: int
    instance_id: str
    execution_id: str
    task_id: int
    name: str
    input: str | None
    dequeue_count: int
    lock_owner: str


@dataclass
class NewMessage:
    """An inbox row to insert (for this or another instance)."""

    instance_id: str
    execution_id: str | None
    kind: str
    event: dict[str, Any]
    visible_at: datetime
    timer_id: int | None = None


@dataclass
class NewActivity:
    """An activity work item to insert."""

    task_id: int
    name: str
    input: str | None


@dataclass
class NewInstance:
    """A sub-orchestration instance to create, with its ExecutionStarted message."""

    instance_id: str
    name: str
    input: str | None
    parent_task_id: int
    version: str | None = None


@dataclass
class EpisodeCommit:
    """Everything one orchestrator episode writes, committed in one transaction (SPEC D3).

    Attributes
    ----------
    consumed : list of int
        Inbox ids the episode added to history (deleted).
    dropped : list of int
        Inbox ids discarded (stale execution, finished instance).
    new_history : list of dict
        Events appended to the history.
    reset_history : bool
        Replace the history instead of appending (continue-as-new).
    status, output, custom_status, execution_id, input : optional
        Instance columns to update (None leaves a column as it is, except custom_status
        which is always written).
    replay_state : dict
        The sequence bookkeeping after the episode.
    activities, messages, instances : lists
        Work the episode schedules.
    cancel_timers : list of int
        TimerIds whose pending TimerFired rows are deleted.
    purge_execution : bool
        The execution ended (completed, failed, terminated, continued as new): its pending
        timers, completions and activity work items are deleted.
    """

    consumed: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    new_history: list[dict[str, Any]] = field(default_factory=list)
    reset_history: bool = False
    status: str | None = None
    output: str | None = None
    custom_status: str | None = None
    execution_id: str | None = None
    input: str | None = None
    replay_state: dict[str, Any] | None = None
    activities: list[NewActivity] = field(default_factory=list)
    messages: list[NewMessage] = field(default_factory=list)
    instances: list[NewInstance] = field(default_factory=list)
    cancel_timers: list[int] = field(default_factory=list)
    purge_execution: bool = False


def empty_replay_state() -> dict[str, Any]:
    """Return the sequence bookkeeping of a fresh execution."""
    return {"next_seq": 0, "action_ids": [], "retries": {}}


class TaskHub:
    """The task hub in one SQLite file, safe for many threads and many processes.

    Parameters
    ----------
    path : str or Path
        The SQLite file (created with its schema if missing).
    clock : Clock
        Time source for timestamps, leases and timer visibility.
    name : str
        Task hub name, as in host.json ``extensions.durableTask.hubName``.
    synchronous : {"FULL", "NORMAL"}
        SQLite durability, see :func:`devhost.sqlite.connect`.
    """

    def __init__(self, path: str | Path, clock: Clock, *, name: str = "TestHubName",
                 synchronous: str = "FULL") -> None:
        self.path = Path(path)
        self.clock = clock
        self.name = name
        self._synchronous = synchronous
        self._local = threading.local()
        # executescript manages its own transaction; CREATE ... IF NOT EXISTS is idempotent,
        # so several processes opening one file at once is safe.
        self._conn().executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.connect(self.path, synchronous=self._synchronous)
            self._local.conn = conn
        return conn

    def _now(self) -> str:
        return format_time(self.clock.now())

    # ----------------------------------------------------------------- client operations
    def create_instance(self, name: str, instance_id: str, input_json: str | None, *,
                        version: str | None = None) -> InstanceRecord:
        """Create an orchestration instance and queue its ExecutionStarted event.

        Parameters
        ----------
        name : str
            Orchestrator function name.
        instance_id : str
            Instance id, already validated (SPEC D2).
        input_json : str or None
            The input, serialised as JSON.
        version : str, optional
            Orchestration version recorded in ExecutionStarted.

        Returns
        -------
        InstanceRecord
            The new instance (status Pending).

        Raises
        ------
        InstanceExistsError
            If a non-terminal instance has that id (a terminal one is replaced, as the
            extension does by default).
        """
        with db.write(self._conn()) as conn:
            row = conn.execute("SELECT runtime_status FROM instances WHERE instance_id=?",
                               (instance_id,)).fetchone()
            if row is not None and row["runtime_status"] not in TERMINAL_STATUSES:
                raise InstanceExistsError(
                    f"instanceId: an instance with ID '{instance_id}' already exists and is "
                    f"{row['runtime_status']}")
            if row is not None:
                self._delete_instance(conn, instance_id)
            self._insert_instance(conn, NewInstance(instance_id, name, input_json, -1, version),
                                  parent=None)
            return self._get(conn, instance_id)

    def _insert_instance(self, conn: sqlite3.Connection, new: NewInstance,
                         parent: tuple[str, str] | None) -> None:
        now = self.clock.now()
        execution_id = uuid.uuid4().hex
        conn.execute(
            "INSERT INTO instances (instance_id, name, version, runtime_status, input,"
            " created_at, last_updated_at, execution_id, parent_instance_id,"
            " parent_execution_id, parent_task_id, replay_state)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (new.instance_id, new.name, new.version, "Pending", new.input, format_time(now),
             format_time(now), execution_id, parent[0] if parent else None,
             parent[1] if parent else None, new.parent_task_id if parent else None,
             json.dumps(empty_replay_state())))
        started = event(EventType.ExecutionStarted, now, Name=new.name, Input=new.input,
                        Version=new.version or "",
                        ParentInstance=({"OrchestrationInstance": {"InstanceId": parent[0]}}
                                        if parent else None))
        self._insert_message(conn, NewMessage(new.instance_id, execution_id, "start", started,
                                              now))

    def _insert_message(self, conn: sqlite3.Connection, m: NewMessage) -> None:
        conn.execute(
            "INSERT INTO inbox (instance_id, execution_id, kind, timer_id, event, visible_at)"
            " VALUES (?,?,?,?,?,?)",
            (m.instance_id, m.execution_id, m.kind, m.timer_id, json.dumps(m.event),
             format_time(m.visible_at)))

    def _delete_instance(self, conn: sqlite3.Connection, instance_id: str) -> None:
        for table in ("history", "inbox", "activities", "instances"):
            conn.execute(f"DELETE FROM {table} WHERE instance_id=?", (instance_id,))

    def _get(self, conn: sqlite3.Connection, instance_id: str) -> InstanceRecord:
        row = conn.execute("SELECT * FROM instances WHERE instance_id=?",
                           (instance_id,)).fetchone()
        if row is None:
            raise InstanceNotFoundError(f"No instance with ID '{instance_id}' found.")
        return InstanceRecord.from_row(row)

    def get_instance(self, instance_id: str) -> InstanceRecord | None:
        """Return the instance, or None if there is none with that id."""
        try:
            return self._get(self._conn(), instance_id)
        except InstanceNotFoundError:
            return None

    def get_history(self, instance_id: str) -> list[dict[str, Any]]:
        """Return the current execution's history events, oldest first (SPEC D5)."""
        rows = self._conn().execute(
            "SELECT event FROM history WHERE instance_id=? ORDER BY position",
            (instance_id,)).fetchall()
        return [json.loads(r["event"]) for r in rows]

    def _send_control(self, instance_id: str, kind: str, ev: dict[str, Any],
                      allowed: frozenset[str] | None = None) -> None:
        with db.write(self._conn()) as conn:
            inst = self._get(conn, instance_id)
            if inst.runtime_status in TERMINAL_STATUSES:
                raise InstanceGoneError(
                    f"Instance with ID '{instance_id}' is gone: it is {inst.runtime_status}")
            if allowed is not None and inst.runtime_status not in allowed:
                raise TaskHubError(
                    f"instance '{instance_id}' is {inst.runtime_status}; {kind} needs one of "
                    f"{sorted(allowed)}")
            self._insert_message(conn, NewMessage(instance_id, None, kind, ev,
                                                  self.clock.now()))

    def raise_event(self, instance_id: str, event_name: str, data_json: str | None) -> None:
        """Queue an EventRaised for the instance (SPEC D8).

        Raises
        ------
        InstanceNotFoundError
            No such instance (404).
        InstanceGoneError
            The instance is completed, failed or terminated (410); nothing is written.
        """
        ev = event(EventType.EventRaised, self.clock.now(), Name=event_name, Input=data_json)
        self._send_control(instance_id, "event", ev)

    def terminate(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionTerminated for the instance (404/410 as :meth:`raise_event`)."""
        ev = event(EventType.ExecutionTerminated, self.clock.now(),
                   Input=json.dumps(reason) if reason is not None else None)
        self._send_control(instance_id, "terminate", ev)

    def suspend(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionSuspended; the instance then runs no episode until resumed."""
        ev = event(EventType.ExecutionSuspended, self.clock.now(), Reason=reason)
        self._send_control(instance_id, "suspend", ev,
                           frozenset({"Pending", "Running", "Suspended"}))

    def resume(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionResumed for a suspended instance."""
        ev = event(EventType.ExecutionResumed, self.clock.now(), Reason=reason)
        self._send_control(instance_id, "resume", ev,
                           frozenset({"Suspended", "Running", "Pending"}))

    def purge(self, instance_id: str, *, only_terminal: bool = True) -> int:
        """Delete an instance and its history in one transaction.

        Parameters
        ----------
        instance_id : str
            The instance.
        only_terminal : bool
            Delete only if it is Completed, Failed or Terminated (checked in the same
            transaction, so an instance restarted meanwhile is never purged while running).

        Returns
        -------
        int
            1 if deleted, 0 if absent or (with ``only_terminal``) not ended.
        """
        with db.write(self._conn()) as conn:
            row = conn.execute("SELECT runtime_status FROM instances WHERE instance_id=?",
                               (instance_id,)).fetchone()
            if row is None or (only_terminal
                               and row["runtime_status"] not in TERMINAL_STATUSES):
                return 0
            self._delete_instance(conn, instance_id)
            return 1

    def query(self, *, statuses: list[str] | None = None, created_from: datetime | None = None,
              created_to: datetime | None = None, prefix: str | None = None, top: int = 100,
              continuation: str | None = None) -> tuple[list[InstanceRecord], str | None]:
        """List instances, oldest first, with continuation-token paging.

        Parameters
        ----------
        statuses : list of str, optional
            Runtime statuses to include (all if None).
        created_from, created_to : datetime, optional
            Inclusive bounds on the creation time.
        prefix : str, optional
            Instance id prefix.
        top : int
            Page size, 1 to 1000.
        continuation : str, optional
            Token from the previous page.

        Returns
        -------
        (list of InstanceRecord, str or None)
            The page and the token of the next page (None on the last page).

        Raises
        ------
        TaskHubError
            If ``top`` is out of range or the token is malformed.
        """
        if not 1 <= top <= 1000:
            raise TaskHubError("top: must be between 1 and 1000")
        where, args = [], []
        if statuses:
            bad = [s for s in statuses if s not in ALL_STATUSES]
            if bad:
                raise TaskHubError(f"runtimeStatus: unknown status {bad}; use {ALL_STATUSES}")
            where.append(f"runtime_status IN ({','.join('?' * len(statuses))})")
            args += statuses
        if created_from:
            where.append("created_at >= ?")
            args.append(format_time(created_from))
        if created_to:
            where.append("created_at <= ?")
            args.append(format_time(created_to))
        if prefix:
            where.append("substr(instance_id, 1, ?) = ?")
            args += [len(prefix), prefix]
        if continuation:
            try:
                created, iid = json.loads(continuation)
            except (ValueError, TypeError) as exc:
                raise TaskHubError("continuationToken: malformed") from exc
            where.append("(created_at, instance_id) > (?, ?)")
            args += [created, iid]
        sql = "SELECT * FROM instances"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, instance_id LIMIT ?"
        rows = self._conn().execute(sql, (*args, top + 1)).fetchall()
        page = [InstanceRecord.from_row(r) for r in rows[:top]]
        token = None
        if len(rows) > top:
            last = rows[top - 1]
            token = json.dumps([last["created_at"], last["instance_id"]])
        return page, token

    def count_by_status(self) -> dict[str, int]:
        """Return the number of instances per runtime status."""
        rows = self._conn().execute(
            "SELECT runtime_status, COUNT(*) AS n FROM instances GROUP BY runtime_status")
        return {r["runtime_status"]: r["n"] for r in rows}

    # ----------------------------------------------------------------- orchestration work
    def claim_orchestration(self, owner: str, lease: timedelta,
                            max_messages: int = 10_000) -> OrchestrationWorkItem | None:
        """Lease the next instance that has visible messages, with its history and messages.

        Parameters
        ----------
        owner : str
            The claiming worker's id (LockedBy of the lease).
        lease : timedelta
            How long the claim holds; an episode must commit within it, else another
            worker may take the instance over (and this one's commit is refused).
        max_messages : int
            At most this many messages are returned.

        Returns
        -------
        OrchestrationWorkItem or None
            None when no instance has visible work.
        """
        now = self._now()
        conn = self._conn()
        with db.write(conn):
            row = conn.execute(
                "SELECT i.instance_id FROM inbox m JOIN instances i USING (instance_id)"
                " WHERE m.visible_at <= ? AND (i.lock_owner IS NULL OR i.lock_expires < ?)"
                " AND (i.runtime_status != 'Suspended' OR m.kind IN ('resume','terminate'))"
                " ORDER BY m.visible_at, m.id LIMIT 1", (now, now)).fetchone()
            if row is None:
                return None
            instance_id = row["instance_id"]
            expires = format_time(self.clock.now() + lease)
            conn.execute("UPDATE instances SET lock_owner=?, lock_expires=? WHERE instance_id=?",
                         (owner, expires, instance_id))
        instance = self._get(conn, instance_id)
        messages = [
            InboxMessage(r["id"], r["kind"], r["execution_id"], r["timer_id"],
                         json.loads(r["event"]))
            for r in conn.execute(
                "SELECT id, kind, execution_id, timer_id, event FROM inbox"
                " WHERE instance_id=? AND visible_at <= ? ORDER BY visible_at, id LIMIT ?",
                (instance_id, now, max_messages))
        ]
        return OrchestrationWorkItem(instance, self.get_history(instance_id), messages, owner)

    def release_orchestration(self, item: OrchestrationWorkItem) -> None:
        """Give up a claim without writing anything (the messages stay queued)."""
        with db.write(self._conn()) as conn:
            conn.execute("UPDATE instances SET lock_owner=NULL, lock_expires=NULL"
                         " WHERE instance_id=? AND lock_owner=?",
                         (item.instance.instance_id, item.lock_owner))

    def commit_episode(self, item: OrchestrationWorkItem, commit: EpisodeCommit) -> bool:
        """Write one episode's results atomically and release the instance (SPEC D3).

        Returns
        -------
        bool
            False, with nothing written, if the lease was lost to another worker.
        """
        inst = item.instance
        now = self.clock.now()
        with db.write(self._conn()) as conn:
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

    def complete_activity(self, item: ActivityWorkItem, result: dict[str, Any]) -> bool:
        """Record an activity's TaskCompleted/TaskFailed event for its orchestration.

        The work item is deleted and the event queued in one transaction. If the item is
        gone (another worker finished it after this one's lease expired), nothing is written:
        the orchestration sees exactly one completion per task.

        Returns
        -------
        bool
            True if this call recorded the completion.
        """
        with db.write(self._conn()) as conn:
            cur = conn.execute("DELETE FROM activities WHERE id=?", (item.id,))
            if cur.rowcount != 1:
                return False
            self._insert_message(conn, NewMessage(item.instance_id, item.execution_id,
                                                  "completion", result, self.clock.now()))
            return True

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
