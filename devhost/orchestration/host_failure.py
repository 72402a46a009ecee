"""The episode that ends an instance the host itself could not run (L3).

Built from the work item alone (the SDK or the episode code may be what failed), it ends
the instance as Azure ends a failed execution: Failed, output ``Orchestrator function
'<name>' failed: <error>``, ExecutionCompleted, pending work purged, a parent sent
SubOrchestrationInstanceFailed (:mod:`devhost.failures.failure_texts`).
"""

from __future__ import annotations

import json
from datetime import datetime

from devhost.failures.failure_texts import orchestrator_error_failure
from devhost.taskhub.events import EventType, event
from devhost.taskhub.records import (
    TERMINAL_STATUSES,
    EpisodeCommit,
    NewMessage,
    OrchestrationWorkItem,
)


def host_failure_commit(item: OrchestrationWorkItem, now: datetime,
                        error: str) -> EpisodeCommit:
    """Return the commit ending a claimed instance as Failed with the host's ``error``.

    It consumes every visible message (only drops them if the instance has ended); the lease
    must still be held when it is written.
    """
    inst = item.instance
    ids = [m.id for m in item.messages]
    if inst.runtime_status in TERMINAL_STATUSES:
        return EpisodeCommit(dropped=ids, custom_status=inst.custom_status)
    reason, details = orchestrator_error_failure(inst.name, error)
    output = json.dumps(reason)
    history = [event(EventType.OrchestratorStarted, now)]
    if not item.has_history():
        history += [m.event for m in item.messages if m.kind == "start"][:1]
    history += [
        event(EventType.OrchestratorCompleted, now),
        event(EventType.ExecutionCompleted, now, OrchestrationStatus="Failed", Result=output,
              FailureDetails={"ErrorType": "LocalHostFailure", "ErrorMessage": error,
                              "StackTrace": ""}),
    ]
    commit = EpisodeCommit(consumed=ids, new_history=[dict(e, IsPlayed=True) for e in history],
                           status="Failed", output=output, custom_status=inst.custom_status,
                           purge_execution=True)
    if inst.parent_instance_id:
        failed = event(EventType.SubOrchestrationInstanceFailed, now,
                       TaskScheduledId=inst.parent_task_id,
                       Reason=reason, Details=details)
        commit.messages.append(NewMessage(inst.parent_instance_id, inst.parent_execution_id,
                                          "completion", failed, now))
    return commit
