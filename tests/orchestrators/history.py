"""Recorded orchestration histories for pure replay tests, without a host (D3, D4).

:class:`History` writes the events the Durable extension records for an instance, episode
by episode, in the JSON shape the extension sends the Python SDK (``EventType`` numbers and
field casing of the Durable Task Framework). :func:`replay` hands the history to the SDK's
own entry point, ``df.Orchestrator.create(fn)``, exactly as the Functions host invokes an
orchestrator, and returns what the orchestrator decided: every action it scheduled (the SDK
returns all of them, replayed and new) and, once done, its output.

Episodes: an episode starts with OrchestratorStarted and ends with OrchestratorCompleted.
Completions (TaskCompleted, TimerFired, EventRaised) open a new episode; what the
orchestrator schedules in response (TaskScheduled, TimerCreated) is recorded in that
episode. Events before the last OrchestratorStarted are marked played (``IsPlayed``), as
the host does, so orchestrator code sees ``is_replaying`` as it would on Azure.

Task ids follow the SDK: activities and timers take sequence numbers 0, 1, 2, ... in the
order the orchestrator yields them; an external event is matched by its name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any

import azure.durable_functions as df

T0 = datetime(2030, 1, 1, tzinfo=UTC)
"""When the histories start (the first OrchestratorStarted)."""

REPLAY_SCHEMA = 1
"""``upperSchemaVersion`` sent to the SDK: flat action lists with compound actions (V2)."""


class Event(IntEnum):
    """History event types, numbered as on the wire."""

    EXECUTION_STARTED = 0
    TASK_SCHEDULED = 4
    TASK_COMPLETED = 5
    TASK_FAILED = 6
    TIMER_CREATED = 10
    TIMER_FIRED = 11
    ORCHESTRATOR_STARTED = 12
    ORCHESTRATOR_COMPLETED = 13
    EVENT_RAISED = 15


class Action(IntEnum):
    """Action types the SDK returns, numbered as on the wire."""

    CALL_ACTIVITY = 0
    CREATE_TIMER = 5
    WAIT_FOR_EXTERNAL_EVENT = 6
    WHEN_ANY = 11
    WHEN_ALL = 12


def stamp(when: datetime) -> str:
    """Format a time as history timestamps and ``FireAt`` are written."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class History:
    """One instance's history, written as the orchestrator's tasks are scheduled and answered.

    Parameters
    ----------
    name : str
        The orchestrator function's name.
    instance_id : str
        The instance id.
    input_ : Any
        The orchestration input as started (JSON value).
    start : datetime
        Time of the first episode.
    """

    def __init__(self, name: str, instance_id: str, input_: Any, start: datetime = T0) -> None:
        self.name = name
        self.instance_id = instance_id
        self.input = json.dumps(input_)
        self.now = start
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        self._add(Event.ORCHESTRATOR_STARTED)
        self._add(Event.EXECUTION_STARTED, Name=name, Version="", Input=self.input)

    def _add(self, kind: Event, event_id: int = -1, **fields: Any) -> None:
        self.events.append({"EventType": int(kind), "EventId": event_id, "IsPlayed": False,
                            "Timestamp": stamp(self.now), **fields})

    def _episode(self, at: datetime) -> None:
        """Close the open episode and start the next one at ``at``."""
        self._add(Event.ORCHESTRATOR_COMPLETED)
        self.now = max(self.now, at)
        self._add(Event.ORCHESTRATOR_STARTED)

    def _take_id(self) -> int:
        task_id, self.next_id = self.next_id, self.next_id + 1
        return task_id

    def activity(self, name: str, result: Any, *, after: float = 1.0) -> int:
        """Record an activity scheduled in this episode and its result in the next.

        Parameters
        ----------
        name : str
            Activity function name.
        result : Any
            Its return value (JSON value; recorded as the JSON text the worker returned).
        after : float
            Seconds between scheduling and completion.

        Returns
        -------
        int
            The task's sequence number.
        """
        task_id = self.scheduled(name)
        self._episode(self.now + timedelta(seconds=after))
        self._add(Event.TASK_COMPLETED, TaskScheduledId=task_id, Result=json.dumps(result))
        return task_id

    def failed_activity(self, name: str, reason: str, details: str = "", *,
                        after: float = 1.0) -> int:
        """Record an activity scheduled in this episode that raised in the next."""
        task_id = self.scheduled(name)
        self._episode(self.now + timedelta(seconds=after))
        self._add(Event.TASK_FAILED, TaskScheduledId=task_id, Reason=reason, Details=details)
        return task_id

    def scheduled(self, name: str) -> int:
        """Record an activity scheduled in this episode, not (yet) answered."""
        task_id = self._take_id()
        self._add(Event.TASK_SCHEDULED, task_id, Name=name, Version="")
        return task_id

    def completed(self, task_id: int, result: Any, *, after: float = 1.0) -> None:
        """Record the result of an activity scheduled earlier (:meth:`scheduled`), in a new
        episode."""
        self._episode(self.now + timedelta(seconds=after))
        self._add(Event.TASK_COMPLETED, TaskScheduledId=task_id, Result=json.dumps(result))

    def timer(self, fire_at: datetime) -> int:
        """Record a durable timer created in this episode; returns its sequence number."""
        timer_id = self._take_id()
        self._add(Event.TIMER_CREATED, timer_id, FireAt=stamp(fire_at))
        return timer_id

    def timer_fired(self, timer_id: int, fire_at: datetime) -> None:
        """Record the timer firing, in a new episode at its fire time."""
        self._episode(fire_at)
        self._add(Event.TIMER_FIRED, TimerId=timer_id, FireAt=stamp(fire_at))

    def raised(self, name: str, payload: Any, *, after: float = 1.0) -> None:
        """Record an external event raised to the instance, in a new episode."""
        self._episode(self.now + timedelta(seconds=after))
        self._add(Event.EVENT_RAISED, Name=name, Input=json.dumps(payload))

    def context(self) -> str:
        """Return the orchestration trigger's context JSON, as the host sends it."""
        last_start = max(i for i, e in enumerate(self.events)
                         if e["EventType"] == Event.ORCHESTRATOR_STARTED)
        history = [{**e, "IsPlayed": i < last_start} for i, e in enumerate(self.events)]
        return json.dumps({"history": history, "input": self.input,
                           "instanceId": self.instance_id, "isReplaying": last_start > 0,
                           "parentInstanceId": None, "upperSchemaVersion": REPLAY_SCHEMA})


@dataclass(frozen=True)
class Decision:
    """What an orchestrator decided for a history.

    Attributes
    ----------
    actions : list of tuple
        Every action scheduled, replayed ones included, in order: ``("call", name,
        input)``, ``("timer", fireAt, isCanceled)``, ``("wait", event name)`` or
        ``("any", [child actions])``, with activity inputs decoded from JSON.
    done : bool
        True once the orchestrator returned.
    output : Any
        Its return value (JSON value), None while running.
    """

    actions: list[tuple[Any, ...]]
    done: bool
    output: Any

    @property
    def calls(self) -> list[str]:
        """The names of the activities scheduled, in order."""
        return [a[1] for a in self.actions if a[0] == "call"]

    def inputs(self, name: str) -> list[Any]:
        """The inputs of every call of activity ``name``, in order."""
        return [a[2] for a in self.actions if a[0] == "call" and a[1] == name]


def _action(raw: dict[str, Any]) -> tuple[Any, ...]:
    kind = Action(raw["actionType"])
    if kind is Action.CALL_ACTIVITY:
        return ("call", raw["functionName"], json.loads(raw["input"]))
    if kind is Action.CREATE_TIMER:
        return ("timer", raw["fireAt"], raw["isCanceled"])
    if kind is Action.WAIT_FOR_EXTERNAL_EVENT:
        return ("wait", raw["externalEventName"])
    return ("any" if kind is Action.WHEN_ANY else "all",
            [_action(child) for child in raw["compoundActions"]])


def replay(orchestrator: Callable[[Any], Any], history: History) -> Decision:
    """Run ``orchestrator`` over ``history`` through the SDK's function-level entry point.

    Parameters
    ----------
    orchestrator : callable
        The generator function (``order_workflow``, ``compensation_workflow``).
    history : History
        The recorded history.

    Returns
    -------
    Decision

    Raises
    ------
    Exception
        As the SDK raises it when the orchestrator fails (message, then the state JSON
        after ``$OutOfProcData$``).
    """
    return _decision(json.loads(df.Orchestrator.create(orchestrator)(history.context())))


def replay_failing(orchestrator: Callable[[Any], Any], history: History,
                   ) -> tuple[str, Decision]:
    """Replay a history the orchestrator fails on; return the error and what it decided.

    The SDK raises the orchestrator's error with the state it returns to the host after
    ``$OutOfProcData$``: the actions of the failing episode are in it, as on Azure.

    Raises
    ------
    AssertionError
        If the orchestrator does not fail.
    """
    try:
        df.Orchestrator.create(orchestrator)(history.context())
    except Exception as exc:  # noqa: BLE001 - the failure is what is read
        message, _, state = str(exc).partition("$OutOfProcData$:")
        return message, _decision(json.loads(state))
    raise AssertionError("the orchestrator did not fail")


def _decision(state: dict[str, Any]) -> Decision:
    actions = [_action(raw) for episode in state["actions"] for raw in episode]
    return Decision(actions=actions, done=state["isDone"], output=state.get("output"))
