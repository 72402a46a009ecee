"""History events in the JSON shape the Durable Functions extension sends to the Python SDK.

Field names, casing and the numeric ``EventType`` values are those of the Durable Task
Framework's ``HistoryEvent`` classes as serialised by the extension's out-of-process protocol
(``azure.durable_functions.models.history.HistoryEventType`` mirrors the enum). The SDK matches
completions to tasks by ``TaskScheduledId`` (activities, sub-orchestrations), ``TimerId``
(timers) and ``Name`` (external events), so those fields must be exact.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any


class EventType(IntEnum):
    """Durable Task Framework history event types (values as on the wire)."""

    ExecutionStarted = 0
    ExecutionCompleted = 1
    ExecutionFailed = 2
    ExecutionTerminated = 3
    TaskScheduled = 4
    TaskCompleted = 5
    TaskFailed = 6
    SubOrchestrationInstanceCreated = 7
    SubOrchestrationInstanceCompleted = 8
    SubOrchestrationInstanceFailed = 9
    TimerCreated = 10
    TimerFired = 11
    OrchestratorStarted = 12
    OrchestratorCompleted = 13
    EventSent = 14
    EventRaised = 15
    ContinueAsNew = 16
    GenericEvent = 17
    HistoryState = 18
    ExecutionSuspended = 19
    ExecutionResumed = 20


TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""The SDK's ``DATETIME_STRING_FORMAT``; history timestamps and ``FireAt`` use it."""


@functools.lru_cache(maxsize=256)
def format_time(when: datetime) -> str:
    """Format a timezone-aware time as the history's UTC timestamp string.

    Parameters
    ----------
    when : datetime
        Timezone-aware time.

    Returns
    -------
    str
        ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.
    """
    # Memoised: one episode stamps several events and leases with the same instant.
    # isoformat() gives the same text as TIMESTAMP_FORMAT, about a third faster.
    utc = when if when.tzinfo is UTC else when.astimezone(UTC)
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_time(text: str) -> datetime:
    """Parse a timestamp written by :func:`format_time` or an ISO 8601 string from the SDK.

    Parameters
    ----------
    text : str
        ISO 8601 time; a trailing ``Z`` or an offset is honoured, a naive time is taken as UTC.

    Returns
    -------
    datetime
        Timezone-aware UTC time.

    Raises
    ------
    ValueError
        If ``text`` is not an ISO 8601 time.
    """
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def event(kind: EventType, when: datetime, event_id: int = -1, **fields: Any) -> dict[str, Any]:
    """Build one history event.

    Parameters
    ----------
    kind : EventType
        The event type.
    when : datetime
        The event's timestamp (timezone-aware).
    event_id : int
        ``EventId``: the task's sequence number for TaskScheduled, TimerCreated,
        SubOrchestrationInstanceCreated and EventSent; -1 for every other event (as DTFx).
    **fields
        Type-specific fields in the wire casing (``Name``, ``Input``, ``Result``,
        ``TaskScheduledId``, ``TimerId``, ``FireAt``, ``Reason``, ``Details``, ...).

    Returns
    -------
    dict
        The event; ``IsPlayed`` is False until the host replays it in a later episode.
    """
    return {
        "EventType": int(kind),
        "EventId": event_id,
        "IsPlayed": False,
        "Timestamp": format_time(when),
        **fields,
    }
