"""The extension's out-of-process shim and DTFx's executor: what runs, and when an instance ends.

Mirrors two sources read at the versions the pinned extension bundle (4.30.0) ships, Durable
Functions extension 3.5.0 and DurableTask.Core 3.4.0:

- azure-functions-durable-extension
  ``src/WebJobs.Extensions.DurableTask/Listener/OutOfProcOrchestrationShim.cs``
  (``ScheduleDurableTaskEvents``, ``ProcessAsyncActionsV2``, ``InvokeAPIFromAction``): the
  SDK's actions (replay schema V2, one per ``yield``) are invoked and **awaited in order**;
  an awaited task's exception is swallowed (since #1957) but the loop waits for it, so an
  action after one whose task is still open is not invoked (not scheduled) yet. ``WhenAll``
  and ``WhenAny`` are .NET's ``Task.WhenAll`` (done when every child ended, failed or not)
  and ``Task.WhenAny`` (done when one ended); every child of a compound action is invoked
  at once. Only a timer can be cancelled (``isCanceled``). The orchestrator's failure
  (``Error``) or output (``IsDone``) is set only after the loop.
- durabletask ``src/DurableTask.Core/TaskOrchestrationExecutor.cs`` (``ExecuteCore``) and
  ``TaskOrchestrationContext.cs`` (``openTasks``, ``CreateTimer``): the instance completes,
  fails or continues as new only when the orchestrator's task has ended **and** no task is
  open: activities, sub-orchestrations and timers scheduled and not yet ended (a cancelled
  timer is removed). External-event waits and entity calls are the extension's own tasks,
  not DTFx's, and hold nothing.

So after ``task_any`` the loser keeps the instance Running until it ends, a timer the code
did not cancel until it fires, and an uncaught ``task_all`` failure fails the instance only
when every sibling has ended (azure-functions-durable-python #354, #573; extension #653).

The completions an episode needs are kept in the replay state (``finished`` task numbers,
``raised`` event counts by name in lower case, ``entity_ids`` request id per entity call),
so no episode parses the stored history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from devhost.orchestration.actions import ActionType
from devhost.taskhub.events import EventType

_ENDS_TASK = {EventType.TaskCompleted: "TaskScheduledId", EventType.TaskFailed: "TaskScheduledId",
              EventType.SubOrchestrationInstanceCompleted: "TaskScheduledId",
              EventType.SubOrchestrationInstanceFailed: "TaskScheduledId",
              EventType.TimerFired: "TimerId"}
"""History events that end a DTFx task, and the field naming the task's number."""

_RETRIED = (ActionType.CallActivityWithRetry, ActionType.CallSubOrchestratorWithRetry)
_DTFX_TASKS = (ActionType.CallActivity, ActionType.CallSubOrchestrator, ActionType.CallHttp,
               ActionType.CreateTimer, *_RETRIED)
"""Actions that open a task in DTFx's ``openTasks`` (the others are the extension's)."""


def record_events(state: dict[str, Any], events: Iterable[dict[str, Any]]) -> None:
    """Note in the replay ``state`` the task ends and raised events among ``events``."""
    finished = state.setdefault("finished", [])
    raised = state.setdefault("raised", {})
    for ev in events:
        kind = ev.get("EventType")
        if kind in _ENDS_TASK:
            task_id = ev.get(_ENDS_TASK[EventType(kind)])
            if task_id is not None and task_id not in finished:
                finished.append(task_id)
        elif kind == EventType.EventRaised:
            # The extension's buffered and pending events are keyed ignoring case
            # (DurableOrchestrationContext, StringComparer.OrdinalIgnoreCase).
            name = str(ev["Name"]).lower()
            raised[name] = raised.get(name, 0) + 1


def rebuild(state: dict[str, Any], stored_texts: Iterable[str]) -> None:
    """Fill the bookkeeping of a replay state written before it was kept, from the history."""
    events = [json.loads(text) for text in stored_texts]
    record_events(state, events)
    ids = state.setdefault("entity_ids", {})
    for ev in events:
        if ev.get("EventType") == EventType.EventSent and ev.get("Input"):
            request = json.loads(ev["Input"])
            if isinstance(request, dict) and "id" in request and not request.get("signal"):
                ids[str(ev["EventId"])] = request["id"]


@dataclass
class ShimOutcome:
    """What the shim does with one episode's actions.

    Attributes
    ----------
    invoked : list of dict
        The atomic actions invoked (scheduled if new), in order: every top-level action up to
        and including the first whose task is still open.
    settled : bool
        Every top-level action's task has ended: the orchestrator's task may end.
    waiting_for : str or None
        The first top-level action still awaited, described for a log line.
    open_tasks : list of str
        DTFx's open tasks among the invoked, described.
    """

    invoked: list[dict[str, Any]] = field(default_factory=list)
    settled: bool = True
    waiting_for: str | None = None
    open_tasks: list[str] = field(default_factory=list)

    @property
    def holds(self) -> str | None:
        """Return what keeps a returned orchestrator's instance Running (None: it may end)."""
        if not self.settled:
            return self.waiting_for
        return self.open_tasks[0] if self.open_tasks else None


class _Walk:
    """One pass over the SDK's actions, numbering them as the host does."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.known = state["action_ids"]
        self.retries = state.get("retries") or {}
        self.finished = set(state.get("finished") or ()) - set(state.get("rewound") or ())
        self.raised = state.get("raised") or {}
        self.entity_ids = state.get("entity_ids") or {}
        self.index = 0
        self.waits: dict[str, int] = {}
        self.outcome = ShimOutcome()

    def visit(self, action: dict[str, Any]) -> tuple[bool, str]:
        """Invoke ``action`` (and its children); return whether its task ended, and a name."""
        kind = ActionType(action["actionType"])
        if kind in (ActionType.WhenAll, ActionType.WhenAny):
            ends = [self.visit(child) for child in action.get("compoundActions", [])]
            done = (all if kind == ActionType.WhenAll else any)(d for d, _ in ends)
            waiting = [name for d, name in ends if not d]
            label = "task_all" if kind == ActionType.WhenAll else "task_any"
            return done, waiting[0] if waiting else label
        self.outcome.invoked.append(action)
        if kind == ActionType.WaitForExternalEvent:
            name = action["externalEventName"]
            nth = self.waits.get(name.lower(), 0)
            self.waits[name.lower()] = nth + 1
            return self.raised.get(name.lower(), 0) > nth, f"external event '{name}'"
        index = self.index
        self.index += 1
        seq = self.known[index][0] if index < len(self.known) else None
        done = self._ended(kind, action, index, seq)
        label = _describe(kind, action, seq)
        if not done and kind in _DTFX_TASKS:
            self.outcome.open_tasks.append(label)
        return done, label

    def _ended(self, kind: ActionType, action: dict[str, Any], index: int,
               seq: int | None) -> bool:
        if kind in (ActionType.SignalEntity, ActionType.ContinueAsNew):
            return True  # fire and forget: the shim's Task.CompletedTask
        if kind == ActionType.CreateTimer and action.get("isCanceled"):
            return True
        if seq is None:
            return False  # invoked in this episode: nothing can have ended it yet
        if kind in _RETRIED:
            return str(index) not in self.retries  # succeeded, exhausted or never scheduled
        if kind == ActionType.CallEntity:
            request_id = self.entity_ids.get(str(seq))
            return request_id is not None and self.raised.get(request_id.lower(), 0) > 0
        return seq in self.finished


def _describe(kind: ActionType, action: dict[str, Any], seq: int | None) -> str:
    number = "" if seq is None else f" (task {seq})"
    if kind == ActionType.CreateTimer:
        return f"the timer firing at {action.get('fireAt')}{number}"
    if kind in (ActionType.CallSubOrchestrator, ActionType.CallSubOrchestratorWithRetry):
        return f"sub-orchestration '{action.get('functionName')}'{number}"
    if kind == ActionType.CallHttp:
        return f"call_http{number}"
    if kind == ActionType.CallEntity:
        return f"entity call to '{action.get('instanceId')}'{number}"
    return f"activity '{action.get('functionName')}'{number}"


def take_actions(state: dict[str, Any], sdk_state: dict[str, Any]) -> ShimOutcome:
    """Take the SDK's actions as ``ProcessAsyncActionsV2`` does (module docstring).

    Parameters
    ----------
    state : dict
        The execution's replay state (``action_ids``, ``retries`` and the bookkeeping
        :func:`record_events` keeps), with this episode's new events recorded.
    sdk_state : dict
        The SDK's answer (``actions``: the V2 list wrapped in one outer list).

    Returns
    -------
    ShimOutcome
        The actions invoked, whether the orchestrator's task may end and what is open.
    """
    walk = _Walk(state)
    for group in sdk_state.get("actions") or []:
        for action in group if isinstance(group, list) else [group]:
            done, label = walk.visit(action)
            if not done:
                walk.outcome.settled = False
                walk.outcome.waiting_for = label
                return walk.outcome
    return walk.outcome
