"""Replay checks of scheduled work, with DTFx's texts (D4).

Host behaviour mirrors durabletask ``src/DurableTask.Core/TaskOrchestrationContext.cs``
(``HandleTaskScheduledEvent``, ``HandleTimerCreatedEvent``,
``HandleSubOrchestrationCreatedEvent``) and
``src/DurableTask.Core/Exceptions/NonDeterministicOrchestrationException.cs``: each
history scheduling event must meet an action of its kind and name (ignoring case) under
its sequence number. DTFx raises outside the shim (``TaskOrchestrationExecutor.ExecuteCore``),
so the output is the text alone, without ``Orchestrator function '<name>' failed:``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devhost.orchestration.actions import ActionType

PREFIX = "Non-Deterministic workflow detected: "
"""``NonDeterministicOrchestrationException(eventId, details)``'s message prefix."""

TYPE_NAME = "DurableTask.Core.Exceptions.NonDeterministicOrchestrationException"
"""The exception's .NET type, named in the failure details."""

_CHANGED = ("Was a change made to the orchestrator code after this instance had already "
            "started running?")

_DOTNET_ACTION = {
    ActionType.CallActivity: "ScheduleTaskOrchestratorAction",
    ActionType.CallActivityWithRetry: "ScheduleTaskOrchestratorAction",
    ActionType.CallHttp: "ScheduleTaskOrchestratorAction",
    ActionType.CreateTimer: "CreateTimerOrchestratorAction",
    ActionType.CallSubOrchestrator: "CreateSubOrchestrationAction",
    ActionType.CallSubOrchestratorWithRetry: "CreateSubOrchestrationAction",
    ActionType.CallEntity: "SendEventOrchestratorAction",
    ActionType.SignalEntity: "SendEventOrchestratorAction",
    ActionType.ContinueAsNew: "OrchestrationCompleteOrchestratorAction",
}
"""The DTFx action class an SDK action becomes, as named in DTFx's messages."""

FAMILY = {
    ActionType.CallActivity: "activity", ActionType.CallActivityWithRetry: "activity",
    ActionType.CallHttp: "activity", ActionType.CreateTimer: "timer",
    ActionType.CallSubOrchestrator: "sub", ActionType.CallSubOrchestratorWithRetry: "sub",
    ActionType.CallEntity: "event", ActionType.SignalEntity: "event",
}
"""The kind of task an action schedules, as DTFx compares them on replay."""


class NonDeterminismError(Exception):
    """The orchestrator's actions no longer match its history (code changed mid-flight)."""


def _same(a: str | None, b: str | None) -> bool:
    return (a or "").lower() == (b or "").lower()


Scheduled = Callable[[], dict[str, Any] | None]
"""Returns the history's scheduling event of the task (read only to write a message)."""


def check_action(seq: int, was: tuple[int, str | None], now: dict[str, Any],
                 scheduled: Scheduled) -> None:
    """Raise :class:`NonDeterminismError` if ``now`` does not replay the scheduled task.

    ``was`` is the (action type, function name) recorded under ``seq`` when it was scheduled.
    """
    was_kind, was_name = ActionType(was[0]), was[1]
    now_kind = ActionType(now["actionType"])
    now_name = now.get("functionName")
    family, now_family = FAMILY.get(was_kind), FAMILY.get(now_kind)
    if family == now_family and (family in ("timer", "event") or _same(was_name, now_name)):
        return
    other = _DOTNET_ACTION.get(now_kind, now_kind.name)
    if family == "activity":
        if now_family != "activity":
            text = (f"A previous execution of this orchestration scheduled an activity task "
                    f"with sequence number {seq} named '{was_name}', but the current "
                    f"orchestration replay instead produced a {other} action with this "
                    f"sequence number. {_CHANGED}")
        else:
            text = (f"A previous execution of this orchestration scheduled an activity task "
                    f"with sequence number {seq} named '{was_name}', but the current "
                    f"orchestration replay instead scheduled an activity task named "
                    f"'{now_name}' with this sequence number.  {_CHANGED}")
    elif family == "timer":
        text = (f"A previous execution of this orchestration scheduled a timer task with "
                f"sequence number {seq} named but the current orchestration replay instead "
                f"produced a {other} action with this sequence number. {_CHANGED}")
    elif family == "sub":
        head = _sub_head(seq, was_name, scheduled)
        if now_family != "sub":
            text = (f"{head}, but the current orchestration replay instead produced a {other} "
                    f"action at this sequence number. {_CHANGED}")
        else:
            text = (f"{head}, but the current orchestration replay instead scheduled a "
                    f"sub-orchestration task with name {now_name} at this sequence number. "
                    f"{_CHANGED}")
    else:
        text = (f"A previous execution of this orchestration scheduled a send event task "
                f"with sequence ID {seq}, but the current orchestration replay instead "
                f"scheduled a {other} task at this sequence number. {_CHANGED}")
    raise NonDeterminismError(PREFIX + text)


def check_missing(seq: int, was: tuple[int, str | None], scheduled: Scheduled) -> None:
    """Raise :class:`NonDeterminismError` for a scheduled task this replay did not produce."""
    was_kind, was_name = ActionType(was[0]), was[1]
    family = FAMILY.get(was_kind)
    if family == "activity":
        text = (f"A previous execution of this orchestration scheduled an activity task with "
                f"sequence ID {seq} and name '{was_name}' (version ''), but the current "
                f"replay execution hasn't (yet?) scheduled this task. {_CHANGED}")
    elif family == "timer":
        text = (f"A previous execution of this orchestration scheduled a timer task with "
                f"sequence number {seq} but the current replay execution hasn't (yet?) "
                f"scheduled this task. {_CHANGED}")
    elif family == "sub":
        text = (f"{_sub_head(seq, was_name, scheduled)}, but the current replay execution "
                f"hasn't (yet?) scheduled this task. {_CHANGED}")
    else:
        text = (f"A previous execution of this orchestration scheduled a send event task "
                f"with sequence ID {seq}, but the current replay execution hasn't (yet?) "
                f"scheduled this task. {_CHANGED}")
    raise NonDeterminismError(PREFIX + text)


def _sub_head(seq: int, name: str | None, scheduled: Scheduled) -> str:
    event = scheduled() or {}
    version, instance_id = event.get("Version") or "", event.get("InstanceId") or ""
    return (f"A previous execution of this orchestration scheduled a sub-orchestration task "
            f"with sequence ID {seq} and name '{name}' (version '{version}', instance ID "
            f"'{instance_id}')")
