"""Stored history events turned into what people read: the status API's list and a table.

The task hub keeps history in the wire shape the SDK replays (numeric ``EventType``, JSON
texts in ``Input``/``Result``). Two readers need something else:

* the status endpoint's ``historyEvents`` (``showHistory=true``), documented by the Durable
  Functions HTTP API: event type names, ``TaskScheduled`` folded into its completion (which
  gains ``FunctionName`` and ``ScheduledTime``), episode markers left out, ``Result`` only
  with ``showHistoryOutput=true`` and ``Input`` only with ``showInput``;
* the CLI's history table (SPEC D5): one row per event with event type, timestamp, name,
  input and result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from devhost.taskhub.events import EventType
from devhost.taskhub.inputs import json_value

_SCHEDULING = {
    EventType.TaskCompleted: EventType.TaskScheduled,
    EventType.TaskFailed: EventType.TaskScheduled,
    EventType.SubOrchestrationInstanceCompleted: EventType.SubOrchestrationInstanceCreated,
    EventType.SubOrchestrationInstanceFailed: EventType.SubOrchestrationInstanceCreated,
}
"""Completion event type -> the event type that scheduled it (matched on EventId)."""

_EPISODE_MARKERS = (EventType.OrchestratorStarted, EventType.OrchestratorCompleted)
_OUTPUT_EVENTS = (EventType.TaskCompleted, EventType.SubOrchestrationInstanceCompleted,
                  EventType.ExecutionCompleted)
_DROPPED_KEYS = ("EventId", "IsPlayed", "TaskScheduledId", "Version", "Tags",
                 "ParentInstance", "OrchestrationInstance")


def event_type_name(value: int) -> str:
    """Return the name of a numeric history ``EventType`` (its number as text if unknown)."""
    try:
        return EventType(value).name
    except ValueError:
        return str(value)


def _scheduling_index(events: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(e["EventType"], e.get("EventId", -1)): e for e in events
            if e["EventType"] in (EventType.TaskScheduled,
                                  EventType.SubOrchestrationInstanceCreated)}


def _scheduler_of(ev: dict[str, Any], index: dict[tuple[int, int], dict[str, Any]]
                  ) -> dict[str, Any] | None:
    kind = _SCHEDULING.get(ev["EventType"])
    if kind is None:
        return None
    return index.get((int(kind), ev.get("TaskScheduledId", -2)))


def history_events_json(events: Iterable[dict[str, Any]], *, show_output: bool = False,
                        show_input: bool = True) -> list[dict[str, Any]]:
    """Convert stored history events to the status API's ``historyEvents`` list.

    Parameters
    ----------
    events : iterable of dict
        History events in wire format, oldest first (``TaskHub.get_history``).
    show_output : bool
        Keep ``Result`` of completions (query parameter ``showHistoryOutput``).
    show_input : bool
        Keep ``Input`` (query parameter ``showInput``, true by default for one instance).

    Returns
    -------
    list of dict
        Oldest first. ``EventType`` is a name (``"TaskCompleted"``); OrchestratorStarted /
        OrchestratorCompleted are left out; a TaskScheduled or SubOrchestrationInstanceCreated
        whose completion is in the history is folded into it (``FunctionName``,
        ``ScheduledTime`` and, with ``show_input``, its ``Input``); ExecutionStarted's
        ``Name`` is renamed ``FunctionName``; ``Input``/``Result`` hold JSON values, not
        JSON texts. This is the shape documented for the Durable Functions HTTP API.
    """
    events = list(events)
    index = _scheduling_index(events)
    folded = set()
    for ev in events:
        scheduler = _scheduler_of(ev, index)
        if scheduler is not None:
            folded.add(id(scheduler))
    out = []
    for ev in events:
        kind = ev["EventType"]
        if kind in _EPISODE_MARKERS or id(ev) in folded:
            continue
        item = {k: v for k, v in ev.items() if k not in _DROPPED_KEYS}
        item["EventType"] = event_type_name(kind)
        scheduler = _scheduler_of(ev, index)
        if scheduler is not None:
            item["FunctionName"] = scheduler.get("Name")
            item["ScheduledTime"] = scheduler.get("Timestamp")
            item["Input"] = scheduler.get("Input")
        if kind == EventType.ExecutionStarted:
            item["FunctionName"] = item.pop("Name", None)
        if kind == EventType.TimerFired:
            item.pop("TimerId", None)
        if kind in _OUTPUT_EVENTS:
            if show_output:
                item["Result"] = json_value(item.get("Result"))
            else:
                item.pop("Result", None)
        if show_input and "Input" in item:
            item["Input"] = json_value(item["Input"])
        else:
            item.pop("Input", None)
        out.append(item)
    return out


def _row_name(ev: dict[str, Any], scheduler: dict[str, Any] | None) -> str | None:
    if scheduler is not None:
        return scheduler.get("Name")
    return ev.get("Name")


def _row_input(ev: dict[str, Any], scheduler: dict[str, Any] | None) -> str | None:
    kind = ev["EventType"]
    if scheduler is not None:
        return scheduler.get("Input")
    if kind in (EventType.TimerCreated, EventType.TimerFired):
        return ev.get("FireAt")
    if kind in (EventType.ExecutionSuspended, EventType.ExecutionResumed):
        return ev.get("Reason")
    return ev.get("Input")


def _row_result(ev: dict[str, Any]) -> str | None:
    kind = ev["EventType"]
    if kind in (EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed):
        return ev.get("Reason")
    return ev.get("Result")


def history_table(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the history of one instance as table rows (SPEC D5).

    Parameters
    ----------
    events : iterable of dict
        History events in wire format, oldest first (``TaskHub.get_history``).

    Returns
    -------
    list of dict
        One row per event, oldest first, with keys ``event_type`` (name such as
        ``"TaskCompleted"``), ``timestamp`` (the stored UTC text), ``name`` (function or
        event name; a completion takes the name of the task that scheduled it), ``input``
        and ``result`` (stored JSON texts, or None). Timers show their fire time as
        ``input``; failures show their reason as ``result``; suspend/resume show their
        reason as ``input``; a termination shows its reason as ``input``.
    """
    events = list(events)
    index = _scheduling_index(events)
    rows = []
    for ev in events:
        scheduler = _scheduler_of(ev, index)
        rows.append({
            "event_type": event_type_name(ev["EventType"]),
            "timestamp": ev.get("Timestamp"),
            "name": _row_name(ev, scheduler),
            "input": _row_input(ev, scheduler),
            "result": _row_result(ev),
        })
    return rows
