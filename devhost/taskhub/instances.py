"""Client-facing operations of the task hub (HTTP API, CLI): create, signal, query, purge.

Every write is one IMMEDIATE transaction; an event for an ended instance is refused before
anything is written.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import uuid
from datetime import datetime
from typing import Any

import sqlitekit as db
from devhost.taskhub.events import EventType, event, format_time
from devhost.taskhub.hub_file import HubPart
from devhost.taskhub.inputs import client_input
from devhost.taskhub.partitions import instance_hash
from devhost.taskhub.records import (
    ALL_STATUSES,
    TERMINAL_STATUSES,
    InstanceExistsError,
    InstanceGoneError,
    InstanceNotFoundError,
    InstanceRecord,
    NewInstance,
    NewMessage,
    RefusedOperationError,
    TaskHubError,
    empty_replay_state,
)


class InstanceStore(HubPart):
    """Instances and their histories: the task hub's client-facing operations."""

    # ----------------------------------------------------------------- client operations

    def create_instance(self, name: str, instance_id: str, input_json: str | None, *,
                        version: str | None = None, stored: bool = False,
                        replace_running: bool = False) -> InstanceRecord:
        """Create an orchestration instance (Pending) and queue its ExecutionStarted.

        ``instance_id`` is validated already (D2); ``input_json`` (the SDK's serialisation) is
        stored as :func:`~devhost.taskhub.inputs.client_input` says, or as is if ``stored``;
        ``version`` defaults to the hub's; ``replace_running``:
        ``overridableExistingInstanceStates: AnyState``.

        Raises
        ------
        InstanceExistsError
            If a non-terminal instance has that id (a terminal one is replaced), DTFx's text.
        """
        payload = input_json if stored else client_input(input_json)
        with db.write(self._conn()) as conn:
            row = conn.execute("SELECT runtime_status FROM instances WHERE instance_id=?",
                               (instance_id,)).fetchone()
            if row is not None and row["runtime_status"] not in TERMINAL_STATUSES \
                    and not replace_running:
                # As durabletask src/DurableTask.AzureStorage/AzureStorageOrchestrationService.cs
                # (CreateTaskOrchestrationAsync, default dedupe statuses, OverridableStates.cs).
                raise InstanceExistsError(
                    f"An Orchestration instance with the status {row['runtime_status']} "
                    "already exists.")
            if row is not None:
                self._delete_instance(conn, instance_id)
            return self._insert_instance(
                conn, NewInstance(instance_id, name, payload, -1, version), parent=None)

    def _insert_instance(self, conn: sqlite3.Connection, new: NewInstance,
                         parent: tuple[str, str] | None) -> InstanceRecord:
        """Insert the instance (Pending) and its ExecutionStarted; return the row written."""
        now = self.clock.now()
        execution_id = uuid.uuid4().hex
        if new.version is None:
            new = dataclasses.replace(new, version=self.default_version)
        row = conn.execute(
            "INSERT INTO instances (instance_id, name, version, runtime_status, input,"
            " created_at, last_updated_at, execution_id, parent_instance_id,"
            " parent_execution_id, parent_task_id, replay_state, id_hash)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING *",
            (new.instance_id, new.name, new.version, "Pending", new.input, format_time(now),
             format_time(now), execution_id, parent[0] if parent else None,
             parent[1] if parent else None, new.parent_task_id if parent else None,
             json.dumps(empty_replay_state()), instance_hash(new.instance_id))).fetchone()
        started = event(EventType.ExecutionStarted, now, Name=new.name, Input=new.input,
                        Version=new.version,
                        ParentInstance=({"OrchestrationInstance": {"InstanceId": parent[0]}}
                                        if parent else None))
        self._insert_message(conn, NewMessage(new.instance_id, execution_id, "start", started,
                                              now))
        return InstanceRecord.from_row(row)

    def _delete_instance(self, conn: sqlite3.Connection, instance_id: str) -> None:
        for table in ("history", "inbox", "activities", "instances"):
            conn.execute(f"DELETE FROM {table} WHERE instance_id=?", (instance_id,))
        conn.execute("DELETE FROM host_failures WHERE work=?", (f"episode:{instance_id}",))

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
        """Return the current execution's history events, oldest first (D5)."""
        return [json.loads(t) for t in self.get_history_json(instance_id)]

    def get_history_json(self, instance_id: str) -> list[str]:
        """Return the current execution's history events as stored JSON texts, oldest first."""
        rows = self._conn().execute(
            "SELECT event FROM history WHERE instance_id=? ORDER BY position",
            (instance_id,)).fetchall()
        return [r["event"] for r in rows]

    def _send_control(self, instance_id: str, kind: str, ev: dict[str, Any],
                      allowed: frozenset[str] | None = None) -> None:
        """Queue a message for an instance in one of ``allowed`` (None: not ended) states.

        One statement (the message inserted only if the instance's row allows it); the row is
        read only when it did not, for the error (404, 410, or the refusal).
        """
        statuses = sorted(allowed if allowed is not None
                          else set(ALL_STATUSES) - TERMINAL_STATUSES)
        row = self._message_row(NewMessage(instance_id, None, kind, ev, self.clock.now()))
        conn = self._conn()
        for _ in range(3):  # the state may change between the insert and the read
            if db.write_one(conn, (
                    "INSERT INTO inbox (instance_id, execution_id, kind, timer_id, event,"
                    " visible_at) SELECT ?,?,?,?,?,? FROM instances WHERE instance_id=? AND"
                    f" runtime_status IN ({','.join('?' * len(statuses))})"),
                    (*row, instance_id, *statuses)).rowcount == 1:
                return
            inst = self._get(conn, instance_id)
            if inst.runtime_status in TERMINAL_STATUSES:
                raise InstanceGoneError(
                    f"Instance with ID '{instance_id}' is gone: it is {inst.runtime_status}")
            if inst.runtime_status not in statuses:
                raise RefusedOperationError(
                    f"Cannot {kind} the orchestration instance {instance_id} because "
                    f"instance is in the {inst.runtime_status} state.")
        raise TaskHubError(f"instance '{instance_id}' changed state during {kind}; try again")

    def raise_event(self, instance_id: str, event_name: str, data_json: str | None) -> None:
        """Queue an EventRaised for the instance (D8).

        Raises
        ------
        InstanceNotFoundError
            No such instance (404).
        InstanceGoneError
            The instance has ended (410); nothing is written.
        """
        ev = event(EventType.EventRaised, self.clock.now(), Name=event_name, Input=data_json)
        self._send_control(instance_id, "event", ev)

    def terminate(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionTerminated (404/410 as :meth:`raise_event`).

        The reason stays the client's string (DTFx ``TaskHubClient.TerminateInstanceAsync``).
        """
        ev = event(EventType.ExecutionTerminated, self.clock.now(), Input=reason)
        self._send_control(instance_id, "terminate", ev)

    def suspend(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionSuspended; the instance then runs no episode until resumed.

        Raises
        ------
        TaskHubError
            500, the extension's text, unless Pending or Running (``DurableClient.SuspendAsync``).
        """
        ev = event(EventType.ExecutionSuspended, self.clock.now(), Reason=reason)
        self._send_control(instance_id, "suspend", ev,
                           frozenset({"Pending", "Running", "ContinuedAsNew"}))

    def resume(self, instance_id: str, reason: str | None) -> None:
        """Queue an ExecutionResumed for a suspended instance.

        Raises
        ------
        TaskHubError
            500 with the extension's text unless Suspended (``DurableClient.ResumeAsync``).
        """
        ev = event(EventType.ExecutionResumed, self.clock.now(), Reason=reason)
        self._send_control(instance_id, "resume", ev, frozenset({"Suspended"}))

    def purge(self, instance_id: str, *, only_terminal: bool = True) -> int:
        """Delete an instance and its history (``only_terminal``: if ended); 1 if deleted."""
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
        """List instances oldest first, paged (``top`` 1 to 1000; creation bounds inclusive).

        Raises
        ------
        TaskHubError
            If ``top``, a status or the continuation token is invalid.
        """
        if not 1 <= top <= 1000:
            raise TaskHubError("top: must be between 1 and 1000")
        where: list[str] = []
        args: list[str | int] = []
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
