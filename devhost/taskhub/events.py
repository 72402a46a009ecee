"""History events in the JSON shape the Durable Functions extension sends to the Python SDK.

Field names, casing and ``EventType`` values are DTFx's ``HistoryEvent`` classes as the
extension serialises them (``azure.durable_functions.models.history.HistoryEventType``). The
SDK matches completions by ``TaskScheduledId``, ``TimerId`` and ``Name``: those must be exact.
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
    """Format a timezone-aware time as the history's ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` UTC string."""
    # Memoised: an episode stamps many events with one instant; isoformat() equals
    # TIMESTAMP_FORMAT's text, a third faster.
    utc = when if when.tzinfo is UTC else when.astimezone(UTC)
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_time(text: str) -> datetime:
    """Parse :func:`format_time` text or an SDK ISO 8601 time (naive taken as UTC) to aware UTC.

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
    """Build one history event (``IsPlayed`` False until a later episode replays it).

    ``event_id``: the task's sequence number for scheduling events and EventSent, else -1 (DTFx).
    """
    return {
        "EventType": int(kind),
        "EventId": event_id,
        "IsPlayed": False,
        "Timestamp": format_time(when),
        **fields,
    }
