"""Rewind of a Failed instance: its failed work runs again and it can complete.

The task hub's side of the extension's ``DurableClient.RewindAsync`` (DTFx's rewind in
``TaskOrchestrationDispatcher``); the episode schedules the failed tasks anew
(``replay_state["rewound"]``, :mod:`devhost.orchestration.episode`).
"""

from __future__ import annotations

import json
import sqlite3
import uuid

import sqlitekit as db
from devhost.taskhub.events import EventType, event
from devhost.taskhub.instances import InstanceStore
from devhost.taskhub.records import (
    InstanceRecord,
    NewMessage,
    RefusedOperationError,
    RewindUnsupportedError,
    empty_replay_state,
)

_RETRY_KINDS = (1, 3)
"""Action types CallActivityWithRetry and CallSubOrchestratorWithRetry."""

_DROPPED = (EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed,
            EventType.ExecutionCompleted)
"""Events a rewind removes from the history (with the failed tasks' scheduling)."""


class InstanceRewind(InstanceStore):
    """Rewind of Failed instances (see :class:`~devhost.taskhub.store.TaskHub`)."""

    def rewind(self, instance_id: str, reason: str | None) -> None:
        """Rewind a Failed instance: its failed work runs again, the rest is kept.

        Mirrors durabletask ``src/DurableTask.Core/TaskOrchestrationDispatcher.cs``: a new execution
        without ExecutionCompleted and the failed tasks' events; failed children are rewound alike.

        Raises
        ------
        InstanceNotFoundError
            No such instance.
        RefusedOperationError
            HTTP 500: the instance is not Failed (``DurableClient.RewindAsync``).
        RewindUnsupportedError
            HTTP 501: a failed task was a ``call_*_with_retry`` (not rewound locally).
        """
        with db.write(self._conn()) as conn:
            inst = self._get(conn, instance_id)
            if inst.runtime_status != "Failed":
                raise RefusedOperationError("The rewind operation is only supported on failed "
                                            "orchestration instances.")
            self._rewind(conn, inst, reason, None)

    def _rewind(self, conn: sqlite3.Connection, inst: InstanceRecord, reason: str | None,
                parent_execution_id: str | None) -> str:
        events = [json.loads(r["event"]) for r in conn.execute(
            "SELECT event FROM history WHERE instance_id=? ORDER BY position",
            (inst.instance_id,))]
        failed = {e.get("TaskScheduledId") for e in events
                  if e["EventType"] in (EventType.TaskFailed,
                                        EventType.SubOrchestrationInstanceFailed)}
        state = json.loads(json.dumps(inst.replay_state)) or empty_replay_state()
        kinds = {entry[0]: entry[1] for entry in state.get("action_ids", [])}
        if state.get("retries") or any(kinds.get(seq) in _RETRY_KINDS or seq not in kinds
                                       for seq in failed):
            raise RewindUnsupportedError(
                f"instance '{inst.instance_id}': a failed task was a call_*_with_retry; the "
                "local host does not rewind retried tasks (restart the instance instead: "
                "POST .../instances/{id}/restart)")
        execution_id = uuid.uuid4().hex
        children = {e.get("EventId"): e.get("InstanceId") for e in events
                    if e["EventType"] == EventType.SubOrchestrationInstanceCreated}
        rerun, rewound_children = set(), False
        for seq in failed:
            child_id = children.get(seq)
            child = self._get(conn, child_id) if child_id is not None and conn.execute(
                "SELECT 1 FROM instances WHERE instance_id=?", (child_id,)).fetchone() else None
            if child is not None and child.runtime_status == "Failed" and seq in children:
                self._rewind(conn, child, reason, execution_id)
                rewound_children = True
            else:
                rerun.add(seq)  # scheduled (or the child created) again on the next replay
        kept = [e for e in events
                if not (e["EventType"] == EventType.TaskScheduled and e.get("EventId") in failed)
                and not (e["EventType"] == EventType.SubOrchestrationInstanceCreated
                         and e.get("EventId") in rerun)
                and e["EventType"] not in _DROPPED]
        state["rewound"] = sorted(rerun)
        conn.execute("DELETE FROM history WHERE instance_id=?", (inst.instance_id,))
        conn.executemany("INSERT INTO history (instance_id, position, event) VALUES (?,?,?)",
                         [(inst.instance_id, k, json.dumps(e)) for k, e in enumerate(kept)])
        conn.execute(
            "UPDATE instances SET runtime_status='Running', output=NULL, execution_id=?,"
            " replay_state=?, last_updated_at=?, history_version=history_version+1,"
            " parent_execution_id=COALESCE(?, parent_execution_id) WHERE instance_id=?",
            (execution_id, json.dumps(state), self._now(), parent_execution_id,
             inst.instance_id))
        conn.execute("DELETE FROM host_failures WHERE work=?", (f"episode:{inst.instance_id}",))
        if not rewound_children:
            self._insert_message(conn, NewMessage(
                inst.instance_id, execution_id, "rewind",
                event(EventType.GenericEvent, self.clock.now(), Data=reason), self.clock.now()))
        return execution_id
