"""Stored history events (the SDK's wire shape) as people read them: status API list, CLI table."""

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
    """Convert stored events (oldest first) to the status API's documented ``historyEvents``.

    Type names; episode markers dropped; a scheduling event folded into its completion
    (``FunctionName``, ``ScheduledTime``, its ``Input``); JSON values, not texts; ``Result``
    with ``show_output`` (``showHistoryOutput``), ``Input`` with ``show_input``.
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
    """Return a row per event (D5): ``event_type``, ``timestamp``, ``name``, ``input``, ``result``.

    A completion takes its scheduler's name; timers show the fire time, suspend, resume and
    terminate their reason as ``input``; failures their reason as ``result``.
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
