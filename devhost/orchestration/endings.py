"""How an episode ends its instance: failed, completed, terminated, continued as new.

A mixin of :class:`devhost.orchestration.episode.Episode` writing the closing events, output
and parent notification with the extension's and DTFx's texts
(:mod:`devhost.failures.failure_texts`).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from devhost.failures.failure_texts import SYSTEM_EXCEPTION, orchestrator_error_failure
from devhost.orchestration.entity_calls import keep_on_continue_as_new
from devhost.orchestration.limits import ARGUMENT_EXCEPTION
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import (
    EpisodeCommit,
    InstanceRecord,
    NewMessage,
    empty_replay_state,
)


class EpisodeEndings:
    """The endings of an episode (its ``inst``, ``now``, ``commit``, ``tail``, ...)."""

    inst: InstanceRecord
    now: datetime
    commit: EpisodeCommit
    tail: list[dict[str, Any]]
    new_events: list[dict[str, Any]]
    state: dict[str, Any]

    def _custom_status_too_large(self, message: str, orchestrator_raised: bool) -> None:
        """Fail the instance as the extension does for a custom status over 16 KB.

        ``OutOfProcOrchestrationShim`` sets the custom status before replaying the actions, so
        nothing is scheduled and the stored status stays. If the orchestrator raised too, the
        ``ArgumentException`` escapes the shim and DTFx fails with its message alone
        (``TaskOrchestrationContext.FailOrchestration``).
        """
        if orchestrator_raised:
            self._fail_with(message, "Unhandled exception while executing orchestration: "
                            f"System.ArgumentException: {message}\n\t", message)
        else:
            self._fail(message, ARGUMENT_EXCEPTION)

    def _fail_with(self, reason: str, details: str, message: str,
                   error_type: str = "OrchestratorFailure") -> None:
        """Fail; ``reason`` is output and parent ``Reason``, ``details`` parent ``Details``."""
        self._end("Failed", json.dumps(reason), reason=reason, details=details,
                  error_message=message, error_type=error_type)

    def _fail(self, message: str, type_name: str = SYSTEM_EXCEPTION) -> None:
        """Fail the instance for an error of the runtime, not of its code."""
        reason, details = orchestrator_error_failure(self.inst.name, message, type_name)
        self._fail_with(reason, details, message)

    def _end(self, status: str, output: str | None, *, reason: str | None = None,
             details: str | None = None, error_message: str | None = None,
             error_type: str = "OrchestratorFailure") -> None:
        self.tail.append(event(EventType.OrchestratorCompleted, self.now))
        if status != "Terminated":
            extra: dict[str, Any] = {"OrchestrationStatus": status, "Result": output}
            if status == "Failed":
                extra["FailureDetails"] = {"ErrorType": error_type,
                                           "ErrorMessage": error_message,
                                           "StackTrace": details}
            self.tail.append(event(EventType.ExecutionCompleted, self.now, **extra))
        self.commit.status = status
        self.commit.output = output
        self.commit.purge_execution = True
        self.commit.activities.clear()
        self.commit.messages = [m for m in self.commit.messages
                                if m.instance_id != self.inst.instance_id]
        self._notify_parent(status, output, reason, details)

    def _notify_parent(self, status: str, output: str | None, reason: str | None,
                       details: str | None) -> None:
        # Host behaviour mirrors durabletask src/DurableTask.Core/TaskOrchestrationDispatcher.cs
        # (ProcessWorkflowCompletedTaskDecision): a Failed or Terminated child sends
        # SubOrchestrationInstanceFailed, Reason its result, Details its details.
        if not self.inst.parent_instance_id:
            return
        if status == "Completed":
            ev = event(EventType.SubOrchestrationInstanceCompleted, self.now,
                       TaskScheduledId=self.inst.parent_task_id, Result=output)
        else:
            ev = event(EventType.SubOrchestrationInstanceFailed, self.now,
                       TaskScheduledId=self.inst.parent_task_id,
                       Reason=reason if status == "Failed" else output,
                       Details=details if status == "Failed" else None)
        self.commit.messages.append(NewMessage(self.inst.parent_instance_id,
                                               self.inst.parent_execution_id, "completion",
                                               ev, self.now))

    def _continue_as_new(self, new_input: Any) -> None:
        # DTFx serialises the SDK's input text once more (ContinueAsNewCore), as for a start.
        input_json = None if new_input is None else json.dumps(new_input)
        execution_id = uuid.uuid4().hex
        parent = ({"OrchestrationInstance": {"InstanceId": self.inst.parent_instance_id}}
                  if self.inst.parent_instance_id else None)
        started = event(EventType.ExecutionStarted, self.now, Name=self.inst.name,
                        Input=input_json, Version=self.inst.version, ParentInstance=parent)
        self.commit.reset_history = True
        self.new_events.clear()
        self.tail.clear()
        self.commit.new_history = []
        self.commit.execution_id = execution_id
        self.commit.input = input_json
        self.commit.status = "Running"
        self.commit.purge_execution = True
        self.commit.activities.clear()
        self.commit.instances.clear()
        self.commit.messages = [*keep_on_continue_as_new(self.commit.messages),
                                NewMessage(self.inst.instance_id, execution_id, "start",
                                           started, self.now)]
        self.state = empty_replay_state()
