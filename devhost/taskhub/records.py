"""Records of the task hub: instances, messages, work items, and the errors it raises."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from devhost.failures.errors import LocalHostError
from devhost.taskhub.events import parse_time

TERMINAL_STATUSES = frozenset({"Completed", "Failed", "Terminated"})
"""Runtime statuses after which an instance accepts no more events (HTTP 410 Gone)."""

ALL_STATUSES = ("Pending", "Running", "Completed", "ContinuedAsNew", "Failed", "Terminated",
                "Suspended")
"""Runtime status names as the Durable Functions HTTP API reports them."""


class TaskHubError(LocalHostError):
    """Base error of the task hub, permanent; ``status`` is the HTTP status the API answers.

    ``summary`` (the body's ``Message``) and ``exception_type`` are set where the extension's
    answer names them.
    """

    status = 400
    summary: str | None = None
    exception_type: str | None = None


class InstanceNotFoundError(TaskHubError):
    """No instance has that id (HTTP 404)."""

    status = 404


class InstanceGoneError(TaskHubError):
    """The instance is completed, failed or terminated (HTTP 410)."""

    status = 410


class InstanceExistsError(TaskHubError):
    """A non-terminal instance with that id exists already.

    DTFx's ``OrchestrationAlreadyExistsException``, which ``HttpApiHandler``'s catch-all answers
    with HTTP 500.
    """

    status = 500
    summary = "Something went wrong while processing your request"
    exception_type = "DurableTask.Core.Exceptions.OrchestrationAlreadyExistsException"


class RefusedOperationError(TaskHubError):
    """The state refuses the operation (``DurableClient``'s ``InvalidOperationException``)."""

    status = 500
    summary = "Something went wrong while processing your request"
    exception_type = "System.InvalidOperationException"


class RewindUnsupportedError(TaskHubError):
    """A rewind the local host does not perform (HTTP 501, docs/fidelity.md)."""

    status = 501


@dataclass(frozen=True)
class InstanceRecord:
    """One orchestration instance as stored (JSON texts, UTC times)."""

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
    replay_state_json: str | None = None
    """``replay_state`` as stored, for an episode's own copy (None in hand-built records)."""
    history_version: int = 0
    """Writes of the history so far (:mod:`devhost.taskhub.sessions`)."""

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
            replay_state=json.loads(row["replay_state"]), replay_state_json=row["replay_state"],
            history_version=row["history_version"],
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
    """What one episode needs: the instance, its history and its visible messages.

    The task hub fills ``history_json`` (stored texts, ``IsPlayed`` true, passed to the SDK
    unparsed) and leaves ``history`` empty; hand-built items may give ``history`` instead.
    """

    instance: InstanceRecord
    history: list[dict[str, Any]]
    messages: list[InboxMessage]
    lock_owner: str
    history_json: list[str] | None = None
    history_end: int | None = None
    """The position the episode's first new event is written at, when the task hub knows it
    (None: found at the commit)."""

    def has_history(self) -> bool:
        """Tell whether the current execution has any history yet."""
        return bool(self.history_json) if self.history_json is not None else bool(self.history)

    def stored_events_json(self) -> list[str]:
        """Return the stored events as JSON texts, each with ``IsPlayed`` true."""
        if self.history_json is not None:
            return self.history_json
        return [json.dumps(dict(e, IsPlayed=True)) for e in self.history]

    def first_events(self, n: int = 2) -> list[dict[str, Any]]:
        """Return the first ``n`` stored events, parsed (ExecutionStarted is among them)."""
        if self.history_json is not None:
            return [json.loads(t) for t in self.history_json[:n]]
        return self.history[:n]


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
    """Everything one orchestrator episode writes, in one transaction (D3).

    ``consumed`` inbox ids went into history, ``dropped`` were discarded; a None column is left
    as is (but ``custom_status``); ``cancel_timers`` TimerIds lose their pending TimerFired
    rows; ``purge_execution`` (it ended) deletes its pending timers, completions and activities.
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
    return {"next_seq": 0, "action_ids": [], "retries": {}, "finished": [], "raised": {},
            "entity_ids": {}}
