"""An instance's history as the Durable HTTP API shows it, turned back into replayable events.

``GET .../instances/{id}?showHistory=true&showHistoryOutput=true`` answers ``historyEvents``
in the extension's documented form (``docs/fidelity.md``; the local host's own is
:func:`devhost.http_api.history_view.history_events_json`): type names, no episode markers,
no ``EventId``/``TaskScheduledId``/``TimerId``, each ``TaskScheduled`` and
``SubOrchestrationInstanceCreated`` folded into its completion (``FunctionName``,
``ScheduledTime``). This module rebuilds what the SDK replays from: the events in the
extension's wire shape, with the sequence numbers DTFx gave each scheduled task (in the
order they were scheduled, the order of their scheduling times) and an
``OrchestratorStarted`` before each batch of new events, dated as that batch.

Tasks scheduled at the very same instant (the local host stamps a whole episode with one
time) cannot be told apart by time: they keep the order the history shows them in, or the
order the code decides them where the history leaves it open (docs/testing.md). A
``call_*_with_retry`` that retried shows its attempts and retry timers as tasks of their
own (:mod:`.check` reads them as one decision).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from devhost.orchestration.actions import HTTP_ACTIVITY, ActionType
from devhost.orchestration.nondeterminism import FAMILY
from devhost.taskhub.events import EventType, parse_time


class HistoryFormatError(ValueError):
    """The document is not an instance's history as the Durable HTTP API returns it."""


@dataclass(frozen=True)
class ScheduledTask:
    """One task the recorded execution scheduled: its sequence number, kind and name.

    ``position`` is the index in ``historyEvents`` of the event that shows it (its
    completion when folded into one).
    """

    seq: int
    kind: ActionType
    name: str | None
    position: int
    event_type: str
    fire_at: str | None = None
    failed: bool = False
    """The task failed (a retried call's attempt that is followed by a retry timer)."""


@dataclass
class RecordedHistory:
    """One instance's recorded history, ready to replay."""

    instance_id: str
    name: str
    input: Any
    version: str | None
    events: list[dict[str, Any]] = field(default_factory=list)
    scheduled: list[ScheduledTask] = field(default_factory=list)
    failed: bool = False
    where: str = "historyEvents[{}]"
    """How a report names a task's ``position`` (a format with one field)."""
    doc: Any = None
    """The status JSON it was rebuilt from (None: a task hub's stored events)."""
    ties: bool = False
    """Tasks of different kinds or names were scheduled at the same instant."""


_COMPLETIONS = {"TaskCompleted": EventType.TaskCompleted, "TaskFailed": EventType.TaskFailed,
                "SubOrchestrationInstanceCompleted": EventType.SubOrchestrationInstanceCompleted,
                "SubOrchestrationInstanceFailed": EventType.SubOrchestrationInstanceFailed}
_SUB = ("SubOrchestrationInstanceCompleted", "SubOrchestrationInstanceFailed",
        "SubOrchestrationInstanceCreated")
_INCOMING = ("TaskCompleted", "TaskFailed", "SubOrchestrationInstanceCompleted",
             "SubOrchestrationInstanceFailed", "TimerFired", "EventRaised", "ExecutionStarted",
             "ExecutionTerminated", "ExecutionSuspended", "ExecutionResumed")


def _text(value: Any) -> str | None:
    """Return the stored JSON text of a value the API showed parsed."""
    return None if value is None else json.dumps(value)


def _events_of(doc: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("historyEvents"), list):
        raise HistoryFormatError("not an instance history: expected the Durable HTTP API's "
                                 "status JSON with historyEvents (showHistory=true"
                                 "&showHistoryOutput=true)")
    events = doc["historyEvents"]
    bad = next((i for i, e in enumerate(events)
                if not isinstance(e, dict) or not isinstance(e.get("EventType"), str)
                or e["EventType"] not in EventType.__members__), None)
    if bad is not None:
        raise HistoryFormatError(f"historyEvents[{bad}]: not a history event (EventType must "
                                 "be a DTFx event type name)")
    if not events or events[0]["EventType"] != "ExecutionStarted":
        raise HistoryFormatError("historyEvents[0]: must be ExecutionStarted")
    return doc, events


def _scheduling(ev: dict[str, Any]) -> tuple[str, ActionType, str | None] | None:
    """Return (time, kind, name) of the task ``ev`` shows scheduled, or None."""
    kind = ev["EventType"]
    if kind in _COMPLETIONS or kind in ("TaskScheduled", "SubOrchestrationInstanceCreated"):
        name = ev.get("FunctionName") or ev.get("Name")
        if kind in _SUB:
            action = ActionType.CallSubOrchestrator
        else:
            action = ActionType.CallHttp if name == HTTP_ACTIVITY else ActionType.CallActivity
        return ev.get("ScheduledTime") or ev.get("Timestamp") or "", action, name
    if kind == "TimerCreated":
        return ev.get("Timestamp") or "", ActionType.CreateTimer, None
    if kind == "EventSent":
        return ev.get("Timestamp") or "", ActionType.SignalEntity, ev.get("Name")
    return None


def _sort_time(text: str) -> str:
    """Return a sortable UTC text of a history time ('' sorts first)."""
    try:
        return parse_time(text).isoformat(timespec="microseconds") if text else ""
    except ValueError:
        raise HistoryFormatError(f"not a history time: {text!r}") from None


Decision = tuple[str | None, str | None]
"""A scheduled task as replay compares it: its kind (:data:`FAMILY`) and name."""


def _same_decision(kind: ActionType, name: str | None, wanted: Decision) -> bool:
    family, wanted_name = wanted
    return FAMILY.get(kind) == family and (
        family in ("timer", "event") or (name or "").lower() == (wanted_name or "").lower())


def _must_precede(a: Any, b: Any, events: list[dict[str, Any]]) -> bool:
    """Tell whether task ``a`` was surely scheduled before ``b`` (both of one instant).

    Events the API shows where they happened keep their order, and a task completed before
    another is shown was scheduled before it; only a task whose completion is shown after
    an event shown in place (a timer created, say) may have been scheduled either side of it.
    """
    if a[0] >= b[0]:
        return False
    return not (events[a[0]]["EventType"] not in _COMPLETIONS
                and events[b[0]]["EventType"] in _COMPLETIONS)


def _as_decided(group: list[Any], wanted: list[Decision],
                events: list[dict[str, Any]]) -> list[Any]:
    """Order tasks of one instant as ``wanted`` (the code's decisions) has them.

    Only where the history leaves that order open (:func:`_must_precede`).
    """
    rest, ordered = list(group), []
    for decision in wanted + [(None, None)] * len(group):
        free = [item for item in rest
                if not any(_must_precede(other, item, events) for other in rest)]
        if not free:
            break
        match = next((item for item in free
                      if _same_decision(item[1][1], item[1][2], decision)), free[0])
        rest.remove(match)
        ordered.append(match)
    return ordered + rest


def number_tasks(events: list[dict[str, Any]], preferred: list[Decision] | None = None
                 ) -> tuple[list[ScheduledTask], bool]:
    """Give each scheduled task DTFx's sequence number: its rank by scheduling time.

    Tasks scheduled at the same instant (the local host stamps a whole episode with one)
    keep the order of the events that show them, or, given ``preferred`` (the decisions a
    replay made, in order), that order where the history leaves it open. Also returns
    whether such ties of different tasks exist.
    """
    found = [(position, s) for position, ev in enumerate(events)
             if (s := _scheduling(ev)) is not None]
    found.sort(key=lambda item: _sort_time(item[1][0]))
    ordered: list[Any] = []
    ties = False
    for _, run in itertools.groupby(found, key=lambda item: _sort_time(item[1][0])):
        group = list(run)
        if len({(FAMILY.get(k), n) for _, (_, k, n) in group}) > 1:
            ties = True
            if preferred:
                group = _as_decided(group, preferred[len(ordered):len(ordered) + len(group)],
                                    events)
        ordered += group
    return [ScheduledTask(seq, kind, name, position, events[position]["EventType"],
                          events[position].get("FireAt"),
                          events[position]["EventType"].endswith("Failed"))
            for seq, (position, (_, kind, name)) in enumerate(ordered)], ties


def parse_history(doc: Any, preferred: list[Decision] | None = None) -> RecordedHistory:
    """Rebuild the replayable history of one instance from its status JSON.

    ``preferred``: the decisions of a first replay, to number tasks of one instant by
    (:func:`number_tasks`).

    Raises
    ------
    HistoryFormatError
        If ``doc`` is not a status JSON with ``historyEvents`` starting at ExecutionStarted.
    """
    doc, events = _events_of(doc)
    started = events[0]
    tasks, ties = number_tasks(events, preferred)
    by_position = {t.position: t for t in tasks}
    timers = [t for t in tasks if t.kind == ActionType.CreateTimer]
    history = RecordedHistory(
        instance_id=str(doc.get("instanceId") or ""),
        name=str(doc.get("name") or started.get("FunctionName") or ""),
        input=started.get("Input"), version=started.get("Version"),
        failed=any(e["EventType"] == "ExecutionFailed" for e in events), scheduled=tasks,
        doc=doc, ties=ties)
    previous_incoming = False
    for position, ev in enumerate(events):
        kind = ev["EventType"]
        stamp = ev.get("Timestamp") or started.get("Timestamp") or ""
        incoming = kind in _INCOMING
        if incoming and not previous_incoming:
            history.events.append(_wire(EventType.OrchestratorStarted, stamp))
        previous_incoming = incoming
        task = by_position.get(position)
        history.events.extend(_rebuilt(ev, task, timers))
    return history


def _wire(kind: EventType, stamp: str, event_id: int = -1, **fields: Any) -> dict[str, Any]:
    return {"EventType": int(kind), "EventId": event_id, "IsPlayed": True, "Timestamp": stamp,
            **fields}


def _rebuilt(ev: dict[str, Any], task: ScheduledTask | None,
             timers: list[ScheduledTask]) -> list[dict[str, Any]]:
    """Return the wire events one ``historyEvents`` entry stands for."""
    kind, stamp = ev["EventType"], ev.get("Timestamp") or ""
    if kind in _COMPLETIONS and task is not None:
        scheduled_kind = (EventType.SubOrchestrationInstanceCreated if kind in _SUB
                          else EventType.TaskScheduled)
        scheduled = _wire(scheduled_kind, ev.get("ScheduledTime") or stamp, task.seq,
                          Name=task.name, Input=_text(ev.get("Input")))
        fields = {k: v for k, v in ev.items()
                  if k not in ("EventType", "Timestamp", "FunctionName", "ScheduledTime",
                               "Input")}
        if "Result" in fields:
            fields["Result"] = _text(fields["Result"])
        return [scheduled, _wire(_COMPLETIONS[kind], stamp, TaskScheduledId=task.seq,
                                 **fields)]
    fields = {k: v for k, v in ev.items() if k not in ("EventType", "Timestamp")}
    if kind == "ExecutionStarted":
        fields["Name"] = fields.pop("FunctionName", None)
        fields["Input"] = _text(fields.get("Input"))
        fields.setdefault("Version", "")  # the SDK reads it; the API may leave it out
    elif kind in ("EventRaised", "EventSent", "TaskScheduled", "SubOrchestrationInstanceCreated"):
        fields["Input"] = _text(fields.get("Input"))
        if "FunctionName" in fields:
            fields["Name"] = fields.pop("FunctionName")
    elif kind == "ExecutionCompleted":
        fields["Result"] = _text(fields.get("Result"))
    elif kind == "TimerFired":
        timer = next((t for t in timers if _same_time(t.fire_at, ev.get("FireAt"))), None)
        if timer is not None:
            fields["TimerId"] = timer.seq
            timers.remove(timer)
    event_id = task.seq if task is not None else -1
    return [_wire(EventType[kind], stamp, event_id, **fields)]


def _same_time(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    try:
        return parse_time(a) == parse_time(b)
    except ValueError:
        return a == b


_STORED_SCHEDULING = {EventType.TaskScheduled: ActionType.CallActivity,
                      EventType.TimerCreated: ActionType.CreateTimer,
                      EventType.SubOrchestrationInstanceCreated: ActionType.CallSubOrchestrator,
                      EventType.EventSent: ActionType.SignalEntity}


def stored_history(instance_id: str, name: str, events: list[dict[str, Any]]) -> RecordedHistory:
    """Return the replayable history of a local task hub's instance from its stored events.

    The stored events carry DTFx's task numbers (``EventId``), so nothing is rebuilt; a
    task's ``position`` is its row in ``devhost history``.
    """
    from devhost.taskhub.inputs import json_value

    started = next((e for e in events if e["EventType"] == EventType.ExecutionStarted), {})
    failed = {e.get("TaskScheduledId") for e in events
              if e["EventType"] in (EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed)}
    tasks = []
    for position, ev in enumerate(events):
        kind = _STORED_SCHEDULING.get(EventType(ev["EventType"]))
        if kind is not None:
            if kind == ActionType.CallActivity and ev.get("Name") == HTTP_ACTIVITY:
                kind = ActionType.CallHttp
            seq = int(ev["EventId"])
            tasks.append(ScheduledTask(seq, kind, ev.get("Name"), position,
                                       EventType(ev["EventType"]).name, ev.get("FireAt"),
                                       seq in failed))
    return RecordedHistory(
        instance_id=instance_id, name=name, input=json_value(started.get("Input")),
        version=started.get("Version"), events=[dict(e, IsPlayed=True) for e in events],
        scheduled=sorted(tasks, key=lambda t: t.seq), where="row {} of devhost history",
        failed=any(e["EventType"] == EventType.ExecutionFailed for e in events))
