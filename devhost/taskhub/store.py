"""Durable state of the task hub: every read and every atomic write the host makes.

Each write is one IMMEDIATE transaction (:func:`sqlitekit.write`): an episode's history,
consumed messages and scheduled work commit together or not at all (D3). Claims are leases
that expire, so a killed process leaves nothing a restart cannot finish; one transaction
serves a batch of episodes or activities.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlitekit as db
from clocks import Clock
from devhost.taskhub.activity_queue import ActivityQueue
from devhost.taskhub.entity_queue import EntityQueue
from devhost.taskhub.events import EventType, event, format_time, parse_time
from devhost.taskhub.host_failure_log import HostFailureLog, clear_host_failures, episode_key
from devhost.taskhub.hub_file import HubFile, HubPart
from devhost.taskhub.partitions import PartitionLeases
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
from devhost.taskhub.rewind import InstanceRewind
from devhost.taskhub.sessions import HistorySessions, Session
from devhost.taskhub.timer_runs import TimerRuns

_CLAIMABLE = (
    "FROM inbox m JOIN instances i USING (instance_id)"
    " WHERE m.visible_at <= ? AND (i.lock_owner IS NULL OR i.lock_expires <= ?)"
    " AND (i.runtime_status != 'Suspended'"
    " OR m.kind IN ('resume','terminate','suspend'))")
"""Visible messages of unleased instances (a suspended one takes only resume, terminate and
a duplicate suspend, which it drops); params: now, now.
"""


def _claimable(partitions: PartitionLeases | None) -> str:
    """Return :data:`_CLAIMABLE`, limited to the owned partitions when ``partitions`` is given."""
    condition = partitions.claim_filter() if partitions is not None else None
    return _CLAIMABLE if condition is None else f"{_CLAIMABLE} AND {condition}"


CLAIM_MESSAGE_CHARS = 32 * 1024 * 1024
"""Event text a claim brings per instance at most (past the first message): the messages
travel in one JSON value, which SQLite bounds (``SQLITE_MAX_LENGTH``, 1e9 bytes)."""


@dataclass
class _Prepared:
    """An episode's commit with its JSON and row tuples built before the transaction."""

    item: OrchestrationWorkItem
    commit: EpisodeCommit
    now: datetime
    history: list[str]
    activities: list[tuple[Any, ...]]
    messages: list[tuple[Any, ...]]
    update: tuple[Any, ...]


@dataclass
class Round:
    """What one :meth:`TaskHub.run_round` transaction wrote and claimed.

    ``committed``/``settled``: False per episode whose lease was lost or completion another
    worker recorded; ``refused``: commits the host could not serialise (L3), with the error,
    nothing written and still leased to the caller.
    """

    committed: list[bool] = field(default_factory=list)
    settled: list[bool] = field(default_factory=list)
    instances: list[OrchestrationWorkItem] = field(default_factory=list)
    activities: list[ActivityWorkItem] = field(default_factory=list)
    refused: list[tuple[OrchestrationWorkItem, str]] = field(default_factory=list)


class TaskHub(HubPart):
    """The task hub in one SQLite file, safe for many threads and processes.

    Itself the orchestration queue; offers its parts' client operations as its own.
    """

    def __init__(self, path: str | Path, clock: Clock, *, name: str = "TestHubName",
                 synchronous: str = "FULL", default_version: str | None = None) -> None:
        super().__init__(HubFile(path, clock, name=name, synchronous=synchronous,
                                 default_version=default_version))
        i = self.instances = InstanceRewind(self.file)
        a = self.activities = ActivityQueue(self.file)
        e = self.entities = EntityQueue(self.file)
        t = self.timers = TimerRuns(self.file)
        f = self.failures = HostFailureLog(self.file)
        self.create_instance, self.get_instance, self.get_history, self.get_history_json = \
            i.create_instance, i.get_instance, i.get_history, i.get_history_json
        self.raise_event, self.terminate, self.suspend, self.resume, self.purge = \
            i.raise_event, i.terminate, i.suspend, i.resume, i.purge
        self.query, self.count_by_status, self.rewind = i.query, i.count_by_status, i.rewind
        self.claim_activities, self.complete_activities, self.settle_and_claim_activities = \
            a.claim_activities, a.complete_activities, a.settle_and_claim_activities
        self.release_activities, self.renew_activities = a.release_activities, a.renew_activities
        self.signal_entity, self.read_entity, self.claim_entities, self.commit_entities = \
            e.signal_entity, e.read_entity, e.claim_entities, e.commit_entities
        self.next_entity_due, self.list_entities = e.next_entity_due, e.list_entities
        self.begin_timer_run, self.renew_timer_run, self.end_timer_run = \
            t.begin_timer_run, t.renew_timer_run, t.end_timer_run
        self.note_episode_failure, self.note_activity_failure, self.force_fail = \
            f.note_episode_failure, f.note_activity_failure, f.force_fail
        self.host_failure_count = f.host_failure_count
        self.sessions = HistorySessions()
        """Histories of instances this object committed, for their next claims."""

    def claim_orchestrations(self, owner: str, lease: timedelta, max_instances: int = 1,
                             max_messages: int = 10_000, *,
                             partitions: PartitionLeases | None = None
                             ) -> list[OrchestrationWorkItem]:
        """Lease up to ``max_instances`` instances with visible messages, in one transaction.

        An episode must commit within ``lease``, else another worker may take the instance over
        and this commit is refused; at most ``max_messages`` messages per instance are loaded.
        ``partitions``: claim only in the partitions these leases own (managed here when
        due); None claims in every partition (drain mode, a single process).
        """
        now = self.clock.now()
        conn = self._conn()
        due = partitions is not None and partitions.due(conn, now)
        if not due and not self._any_visible(conn, format_time(now), partitions):
            return []  # nothing to claim: no turn at the write lock
        with db.write(conn):
            if due and partitions is not None:
                partitions.manage(conn, now)
            claimed = self._claim_instances(conn, owner, now, lease, max_instances, partitions,
                                            max_messages)
        return self._load_work_items(claimed, owner)

    def release_partitions(self, partitions: PartitionLeases) -> None:
        """Give up every partition lease of ``partitions`` (a graceful stop), in one transaction.

        Another process claims them at its next pass, not after the lease expires (DTFx's
        table partition manager releases its leases on shutdown).
        """
        with db.write(self._conn()) as conn:
            partitions.release_all(conn)

    @staticmethod
    def _any_visible(conn: Any, stamp: str, partitions: PartitionLeases | None = None) -> bool:
        # Outside any transaction (WAL: never blocked); a false "no" is caught by the next poll.
        return conn.execute(
            f"SELECT 1 {_claimable(partitions)} LIMIT 1", (stamp, stamp)).fetchone() is not None

    def _claim_instances(self, conn: Any, owner: str, now: datetime, lease: timedelta,
                         max_instances: int, partitions: PartitionLeases | None = None,
                         max_messages: int = 10_000) -> list[Any]:
        """Lease up to ``max_instances`` claimable instances; return their rows as leased.

        One statement: the oldest visible messages' instances leased and their rows
        returned, with whether a host failure was counted for one (by any process: its
        commit clears it) and, as a JSON array, its first ``max_messages`` visible messages,
        as many as begin within :data:`CLAIM_MESSAGE_CHARS` of event text (at least one;
        the others wait for the next episode).
        """
        if max_instances <= 0:
            return []
        stamp = format_time(now)
        rows = conn.execute(
            "UPDATE instances SET lock_owner=?, lock_expires=? WHERE instance_id IN"
            f" (SELECT DISTINCT i.instance_id {_claimable(partitions)}"
            " ORDER BY m.visible_at, m.id LIMIT ?) RETURNING *,"
            " EXISTS (SELECT 1 FROM host_failures f WHERE f.work = 'episode:' || instance_id)"
            " AS host_failed, (SELECT json_group_array(json_array(visible_at, id, kind,"
            " execution_id, timer_id, event)) FROM (SELECT *, SUM(length(event)) OVER"
            " (ORDER BY visible_at, id) AS upto FROM inbox m"
            " WHERE m.instance_id = instances.instance_id AND m.visible_at <= ?"
            " ORDER BY m.visible_at, m.id LIMIT ?) WHERE upto - length(event) < ?) AS messages",
            (owner, format_time(now + lease), stamp, stamp, max_instances, stamp,
             max_messages, CLAIM_MESSAGE_CHARS)).fetchall()
        self.file.saw_host_failures([episode_key(r["instance_id"]) for r in rows
                                     if r["host_failed"]])
        return rows

    def _load_work_items(self, claimed: list[Any], owner: str) -> list[OrchestrationWorkItem]:
        """Build the claimed instances' work items, oldest first message first."""
        # After the claim: the lease keeps writers off the history.
        conn = self._conn()
        loaded = []
        for row in claimed:
            # (visible_at, id) order: the aggregate's input order is not promised.
            messages = sorted(tuple(m) for m in json.loads(row["messages"]))
            inst = InstanceRecord.from_row(row)
            session = self._session(conn, inst)
            loaded.append((messages[0][:2] if messages else ("", 0), OrchestrationWorkItem(
                inst, [], [InboxMessage(m[1], m[2], m[3], m[4], json.loads(m[5]))
                           for m in messages], owner,
                history_json=session.texts, history_end=session.end)))
        loaded.sort(key=lambda pair: pair[0])
        return [item for _, item in loaded]

    def _session(self, conn: Any, inst: InstanceRecord) -> Session:
        """Return the claimed instance's history: the kept session, else read from the file."""
        kept = self.sessions.find(inst.instance_id, inst.execution_id, inst.history_version)
        if kept is not None:
            return kept
        rows = conn.execute("SELECT position, event FROM history WHERE instance_id=?"
                            " ORDER BY position", (inst.instance_id,)).fetchall()
        session = Session(inst.execution_id, inst.history_version, [r[1] for r in rows],
                          rows[-1][0] + 1 if rows else 0)
        self.sessions.keep(inst.instance_id, session)
        return session

    def release_orchestration(self, item: OrchestrationWorkItem) -> None:
        """Give up a claim without writing anything (the messages stay queued)."""
        with db.write(self._conn()) as conn:
            conn.execute("UPDATE instances SET lock_owner=NULL, lock_expires=NULL"
                         " WHERE instance_id=? AND lock_owner=?",
                         (item.instance.instance_id, item.lock_owner))

    def abandon_orchestration(self, item: OrchestrationWorkItem, delay: timedelta) -> None:
        """Release a claim, hiding its messages for ``delay`` (DTFx, for a rejected version)."""
        later = format_time(self.clock.now() + delay)
        with db.write(self._conn()) as conn:
            conn.execute("UPDATE inbox SET visible_at=? WHERE instance_id=? AND visible_at<?",
                         (later, item.instance.instance_id, later))
            conn.execute("UPDATE instances SET lock_owner=NULL, lock_expires=NULL"
                         " WHERE instance_id=? AND lock_owner=?",
                         (item.instance.instance_id, item.lock_owner))

    def commit_episodes(self, batch: list[tuple[OrchestrationWorkItem, EpisodeCommit]]
                        ) -> list[bool]:
        """Write episodes in one transaction (D3); False per lost lease (nothing of it written)."""
        prepared = [self._prepare(item, commit, self.clock.now()) for item, commit in batch]
        with self._dropping_sessions_on_failure(), db.write(self._conn()) as conn:
            versions = [self._commit_one(conn, p) for p in prepared]
            committed = [v is not None for v in versions]
            self._clear_episode_failures(conn, prepared, committed)
        self._keep_sessions(prepared, versions)
        return committed

    def run_round(self, commits: list[tuple[OrchestrationWorkItem, EpisodeCommit]],
                  completions: list[tuple[ActivityWorkItem, dict[str, Any]]], owner: str, *,
                  orchestration_lease: timedelta, max_instances: int,
                  activity_lease: timedelta, max_activities: int,
                  partitions: PartitionLeases | None = None) -> Round:
        """Commit episodes, record activity completions and claim new work: one transaction.

        A host process's whole turn at the write lock: one fsync serves everything finished since
        the last turn. ``max_instances``/``max_activities`` 0 claims none of that kind.
        ``partitions``: orchestrations are claimed only in the partitions these leases own, and
        the leases are renewed, claimed or handed over in this transaction when a pass is due
        (every third of the lease, so most rounds add nothing); None claims in every partition.
        Activities are claimed in every partition (DTFx's one work-item queue).
        """
        now = self.clock.now()
        stamp = format_time(now)
        conn = self._conn()
        due = partitions is not None and partitions.due(conn, now)
        if not due and not commits and not completions and not (
                max_instances > 0 and self._any_visible(conn, stamp, partitions)
                or max_activities > 0 and self.activities._any_claimable(conn, stamp)):
            return Round()  # nothing to write or claim: no turn at the write lock
        prepared, refused = self._prepare_all(commits, now)
        messages = self.activities._completion_rows(completions, now)
        with self._dropping_sessions_on_failure(), db.write(conn):
            if due and partitions is not None:
                partitions.manage(conn, now)
            versions = [self._commit_one(conn, p) for p in prepared]
            written = [v is not None for v in versions]
            self._clear_episode_failures(conn, prepared, written)
            settled = self.activities._settle(conn, completions, messages)
            claimed = self._claim_instances(conn, owner, now, orchestration_lease,
                                            max_instances, partitions)
            rows = self.activities._claim_activity_rows(conn, owner, stamp,
                                             format_time(now + activity_lease), max_activities)
        self._keep_sessions(prepared, versions)
        won = {id(p.item): w for p, w in zip(prepared, written, strict=True)}
        return Round([won.get(id(item), False) for item, _ in commits], settled,
                     self._load_work_items(claimed, owner),
                     self.activities._activity_items(rows, owner), refused)

    def _prepare_all(self, commits: list[tuple[OrchestrationWorkItem, EpisodeCommit]],
                     now: datetime) -> tuple[list[_Prepared],
                                             list[tuple[OrchestrationWorkItem, str]]]:
        """Prepare each commit; one that cannot be serialised is refused, not the round."""
        prepared, refused = [], []
        for item, commit in commits:
            try:
                prepared.append(self._prepare(item, commit, now))
            except Exception as exc:  # noqa: BLE001 - a host-side failure of that episode
                refused.append((item, f"{type(exc).__name__}: {exc}"))
        return prepared, refused

    @contextlib.contextmanager
    def _dropping_sessions_on_failure(self) -> Iterator[None]:
        """Drop every kept session if the block raises; the next claims read the file.

        A write that failed may have met what a session did not know (say, a history
        position taken by a writer that keeps no version).
        """
        try:
            yield
        except BaseException:
            self.sessions.clear()
            raise

    def _keep_sessions(self, prepared: list[_Prepared], versions: list[int | None]) -> None:
        """Keep each committed episode's history for the instance's next claim (after COMMIT)."""
        for p, version in zip(prepared, versions, strict=True):
            item, commit = p.item, p.commit
            instance_id = item.instance.instance_id
            if version is None or item.history_json is None or item.history_end is None:
                continue  # not written, or a hand-built item: nothing known to keep
            if commit.status in TERMINAL_STATUSES:
                self.sessions.forget(instance_id)
                continue
            before, end = ([], 0) if commit.reset_history else (item.history_json,
                                                                 item.history_end)
            self.sessions.keep(instance_id, Session(
                commit.execution_id or item.instance.execution_id, version,
                before + p.history, end + len(p.history)))

    def _clear_episode_failures(self, conn: Any, prepared: list[_Prepared],
                                written: list[bool]) -> None:
        clear_host_failures(conn, self.file, [episode_key(p.item.instance.instance_id)
                                   for p, w in zip(prepared, written, strict=True) if w])

    def _prepare(self, item: OrchestrationWorkItem, commit: EpisodeCommit,
                 now: datetime) -> _Prepared:
        """Serialise an episode's writes before the transaction (see :meth:`_commit_one`)."""
        inst = item.instance
        execution_id = commit.execution_id or inst.execution_id
        return _Prepared(
            item, commit, now, [json.dumps(e) for e in commit.new_history],
            [(inst.instance_id, execution_id, a.task_id, a.name, a.input, format_time(now))
             for a in commit.activities],
            [self._message_row(m) for m in commit.messages],
            (commit.status, commit.output, commit.custom_status, execution_id,
             commit.input, json.dumps(commit.replay_state) if commit.replay_state else None,
             format_time(now), inst.instance_id))

    def _commit_one(self, conn: Any, prepared: _Prepared) -> int | None:
        """Write one episode in the caller's transaction; return its history version.

        None, with nothing written, when the lease was lost: the instance row's update comes
        first and is the check (lock owner, execution id and history version still the
        claim's, so an episode of an older claim by the same owner is refused too).
        """
        item, commit = prepared.item, prepared.commit
        inst = item.instance
        version = conn.execute(
            "UPDATE instances SET runtime_status=COALESCE(?, runtime_status),"
            " output=COALESCE(?, output), custom_status=?, execution_id=?,"
            " input=COALESCE(?, input), replay_state=COALESCE(?, replay_state),"
            " last_updated_at=?, lock_owner=NULL, lock_expires=NULL,"
            " history_version=history_version+1"
            " WHERE instance_id=? AND lock_owner=? AND execution_id=? AND history_version=?"
            " RETURNING history_version",
            (*prepared.update, item.lock_owner, inst.execution_id,
             inst.history_version)).fetchone()
        if version is None:
            return None
        self._delete_messages(conn, prepared)
        self._append_history(conn, prepared)
        if commit.purge_execution:
            conn.execute("DELETE FROM activities WHERE instance_id=? AND execution_id=?",
                         (inst.instance_id, inst.execution_id))
        conn.executemany(
            "INSERT OR IGNORE INTO activities (instance_id, execution_id, task_id, name,"
            " input, lock_expires) VALUES (?,?,?,?,?,?)", prepared.activities)
        db.insert_rows(conn, self.INSERT_MESSAGES, prepared.messages)
        for child in commit.instances:
            self._start_child(conn, prepared, child)
        return int(version[0])

    @staticmethod
    def _delete_messages(conn: Any, prepared: _Prepared) -> None:
        """Delete the episode's messages in one statement (more only past a chunk of ids).

        The consumed and dropped ones, and the cancelled timers' or, when the execution
        ended, all of its own.
        """
        commit, inst = prepared.commit, prepared.item.instance
        gone = commit.consumed + commit.dropped
        head, rest = gone[:db.ROWS_PER_STATEMENT], gone[db.ROWS_PER_STATEMENT:]
        conditions = [f"id IN ({','.join('?' * len(head))})"]
        params: list[Any] = list(head)
        if commit.purge_execution:
            conditions.append("(instance_id=? AND execution_id=?)")
            params += [inst.instance_id, inst.execution_id]
        elif commit.cancel_timers:
            conditions.append("(instance_id=? AND execution_id=? AND timer_id IN"
                              f" ({','.join('?' * len(commit.cancel_timers))}))")
            params += [inst.instance_id, inst.execution_id, *commit.cancel_timers]
        if params:
            conn.execute(f"DELETE FROM inbox WHERE {' OR '.join(conditions)}", params)
        db.run_for_each(conn, "DELETE FROM inbox WHERE id IN (?)", (), rest)

    @staticmethod
    def _append_history(conn: Any, prepared: _Prepared) -> None:
        """Write the episode's new events after the stored ones (all of them after a reset)."""
        item, instance_id = prepared.item, prepared.item.instance.instance_id
        if prepared.commit.reset_history:
            conn.execute("DELETE FROM history WHERE instance_id=?", (instance_id,))
            start = 0
        elif item.history_end is not None:  # known at the claim; the lease kept it so
            start = item.history_end
        else:
            start = conn.execute(
                "SELECT COALESCE(MAX(position)+1, 0) FROM history WHERE instance_id=?",
                (instance_id,)).fetchone()[0]
        db.insert_rows(conn, "INSERT INTO history (instance_id, position, event) VALUES",
                       [(instance_id, start + k, text)
                        for k, text in enumerate(prepared.history)])

    def _start_child(self, conn: Any, prepared: _Prepared, child: NewInstance) -> None:
        """Create a sub-orchestration, or answer SubOrchestrationInstanceFailed if one runs."""
        inst, now = prepared.item.instance, prepared.now
        execution_id = prepared.commit.execution_id or inst.execution_id
        existing = None if child.instance_id == inst.instance_id else conn.execute(
            "SELECT runtime_status FROM instances WHERE instance_id=?",
            (child.instance_id,)).fetchone()
        if existing is not None and existing["runtime_status"] in TERMINAL_STATUSES:
            self.instances._delete_instance(conn, child.instance_id)
        elif existing is not None or child.instance_id == inst.instance_id:
            # The parent itself counts as running: its row is already this episode's.
            failed = event(
                EventType.SubOrchestrationInstanceFailed, now,
                TaskScheduledId=child.parent_task_id,
                Reason=f"An instance with ID '{child.instance_id}' already exists.",
                Details=None)
            self._insert_message(conn, NewMessage(inst.instance_id, execution_id,
                                                  "completion", failed, now))
            return
        self.instances._insert_instance(conn, child, parent=(inst.instance_id, execution_id))

    # ----------------------------------------------------------------- scheduling helpers
    def next_due(self) -> datetime | None:
        """Return the earliest time at which queued work becomes visible, or None if idle."""
        conn = self._conn()
        # A leased instance's message is due when the lease ends at the earliest (L3).
        times = [
            conn.execute("SELECT MIN(MAX(m.visible_at, COALESCE(i.lock_expires, '')))"
                         " FROM inbox m JOIN instances i"
                         " USING (instance_id) WHERE i.runtime_status != 'Suspended'"
                         " OR m.kind IN ('resume','terminate','suspend')").fetchone()[0],
            conn.execute("SELECT MIN(lock_expires) FROM activities").fetchone()[0],
        ]
        due = [parse_time(t) for t in times if t]
        return min(due) if due else None
