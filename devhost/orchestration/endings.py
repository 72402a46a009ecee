"""How an episode ends its instance: failed, completed, terminated, continued as new.

:class:`EpisodeEnding` writes the closing events, output and parent notification of one
:class:`devhost.orchestration.episode.Episode` with the extension's and DTFx's texts
(:mod:`devhost.failures.failure_texts`). It owns no state: every attribute it writes is
the episode's, named as ``self.episode.<attribute>``.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from devhost.failures.failure_texts import SYSTEM_EXCEPTION, orchestrator_error_failure
from devhost.orchestration.entity_calls import keep_on_continue_as_new
from devhost.orchestration.limits import ARGUMENT_EXCEPTION
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import (
    NewMessage,
    empty_replay_state,
)

if TYPE_CHECKING:
    from devhost.orchestration.episode import Episode

log = logging.getLogger("devhost.functions")


class EpisodeEnding:
    """The endings of one episode, written into the episode's own commit and events."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode

    def custom_status_too_large(self, message: str, orchestrator_raised: bool) -> None:
        """Fail the instance as the extension does for a custom status over 16 KB.

        ``OutOfProcOrchestrationShim`` sets the custom status before replaying the actions, so
        nothing is scheduled and the stored status stays. If the orchestrator raised too, the
        ``ArgumentException`` escapes the shim and DTFx fails with its message alone
        (``TaskOrchestrationContext.FailOrchestration``).
        """
        if orchestrator_raised:
            self.fail_with(message, "Unhandled exception while executing orchestration: "
                            f"System.ArgumentException: {message}\n\t", message)
        else:
            self.fail(message, ARGUMENT_EXCEPTION)

    def fail_with(self, reason: str, details: str, message: str,
                   error_type: str = "OrchestratorFailure") -> None:
        """Fail; ``reason`` is output and parent ``Reason``, ``details`` parent ``Details``."""
        self.end("Failed", json.dumps(reason), reason=reason, details=details,
                  error_message=message, error_type=error_type)

    def fail(self, message: str, type_name: str = SYSTEM_EXCEPTION) -> None:
        """Fail the instance for an error of the runtime, not of its code."""
        reason, details = orchestrator_error_failure(self.episode.inst.name, message, type_name)
        self.fail_with(reason, details, message)

    def end(self, status: str, output: str | None, *, reason: str | None = None,
             details: str | None = None, error_message: str | None = None,
             error_type: str = "OrchestratorFailure") -> None:
        """End the instance as ``status`` with ``output`` (JSON text); tell its parent."""
        self.episode.tail.append(event(EventType.OrchestratorCompleted, self.episode.now))
        if status != "Terminated":
            extra: dict[str, Any] = {"OrchestrationStatus": status, "Result": output}
            if status == "Failed":
                extra["FailureDetails"] = {"ErrorType": error_type,
                                           "ErrorMessage": error_message,
                                           "StackTrace": details}
                # One console line, as the extension's FunctionFailed trace prints it.
                log.error("%s: Function '%s (Orchestrator)' failed with an error. Reason: %s",
                          self.episode.inst.instance_id, self.episode.inst.name,
                          next(iter((reason or error_message or "").splitlines()), "")[:500]
                          .rstrip())
            self.episode.tail.append(event(EventType.ExecutionCompleted, self.episode.now, **extra))
        self.episode.commit.status = status
        self.episode.commit.output = output
        self.episode.commit.purge_execution = True
        self.episode.commit.activities.clear()
        self.episode.commit.messages = [m for m in self.episode.commit.messages
                                if m.instance_id != self.episode.inst.instance_id]
        self.notify_parent(status, output, reason, details)

    def notify_parent(self, status: str, output: str | None, reason: str | None,
                       details: str | None) -> None:
        """Send the parent orchestration the child's completion or failure, if it has one."""
        # Host behaviour mirrors durabletask src/DurableTask.Core/TaskOrchestrationDispatcher.cs
        # (ProcessWorkflowCompletedTaskDecision): a Failed or Terminated child sends
        # SubOrchestrationInstanceFailed, Reason its result, Details its details.
        if not self.episode.inst.parent_instance_id:
            return
        if status == "Completed":
            ev = event(EventType.SubOrchestrationInstanceCompleted, self.episode.now,
                       TaskScheduledId=self.episode.inst.parent_task_id, Result=output)
        else:
            ev = event(EventType.SubOrchestrationInstanceFailed, self.episode.now,
                       TaskScheduledId=self.episode.inst.parent_task_id,
                       Reason=reason if status == "Failed" else output,
                       Details=details if status == "Failed" else None)
        self.episode.commit.messages.append(NewMessage(self.episode.inst.parent_instance_id,
                                               self.episode.inst.parent_execution_id, "completion",
                                               ev, self.episode.now))

    def continue_as_new(self, new_input: Any) -> None:
        """Start a new execution of the instance with ``new_input`` (DTFx ContinueAsNew)."""
        # DTFx serialises the SDK's input text once more (ContinueAsNewCore), as for a start.
        input_json = None if new_input is None else json.dumps(new_input)
        execution_id = uuid.uuid4().hex
        parent = ({"OrchestrationInstance": {"InstanceId": self.episode.inst.parent_instance_id}}
                  if self.episode.inst.parent_instance_id else None)
        started = event(EventType.ExecutionStarted, self.episode.now, Name=self.episode.inst.name,
                        Input=input_json, Version=self.episode.inst.version, ParentInstance=parent)
        self.episode.commit.reset_history = True
        self.episode.new_events.clear()
        self.episode.tail.clear()
        self.episode.commit.new_history = []
        self.episode.commit.execution_id = execution_id
        self.episode.commit.input = input_json
        self.episode.commit.status = "Running"
        self.episode.commit.purge_execution = True
        self.episode.commit.activities.clear()
        self.episode.commit.instances.clear()
        self.episode.commit.messages = [*keep_on_continue_as_new(self.episode.commit.messages),
                                NewMessage(self.episode.inst.instance_id, execution_id, "start",
                                           started, self.episode.now)]
        self.episode.state = empty_replay_state()
