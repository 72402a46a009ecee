"""Warnings about the Python SDK's known surprises with external events (L1, D8).

The host never changes how the SDK treats events (Azure behaves the same); it logs a
WARNING when an episode meets one: case-sensitive names, or one slot per name
(azure-functions-durable-python#507), see docs/local-host.md. Both count the waits among
the actions and the history's EventRaised events, only in episodes that bring one.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from devhost.orchestration.actions import ActionType
from devhost.taskhub.events import EventType

log = logging.getLogger("devhost.events")

ONE_SLOT_ISSUE = "https://github.com/Azure/azure-functions-durable-python/issues/507"
"""Public issue: an event raised before its wait is handed to every later wait."""

_RAISED = f'"EventType": {int(EventType.EventRaised)},'


def warn_event_surprises(instance_id: str, new_events: list[dict[str, Any]],
                         stored_events_json: Callable[[], list[str]],
                         actions: list[dict[str, Any]]) -> None:
    """Log the SDK's event surprises that this episode's new events run into.

    ``stored_events_json`` gives the history before this episode, as JSON texts (called only
    when a new event is an EventRaised); ``actions`` are the atomic actions after the replay.
    """
    new_names = [e.get("Name") for e in new_events
                 if e.get("EventType") == EventType.EventRaised]
    if not new_names:
        return
    waits = Counter(a.get("externalEventName") for a in actions
                    if a.get("actionType") == ActionType.WaitForExternalEvent)
    received = Counter(json.loads(t).get("Name") for t in stored_events_json()
                       if _RAISED in t)
    for name in new_names:
        received[name] += 1
        _warn_case(instance_id, name, waits, received)
        if received[name] - waits[name] >= 2:
            log.warning(
                "instance '%s': event '%s' arrived while an earlier '%s' was still waiting "
                "for a wait_for_external_event; the Python SDK keeps one event per name "
                "until a wait takes it, so the earlier one is lost, and the kept one is "
                "handed to every later wait of that name. Azure behaves the same (%s); "
                "raise distinct event names, or wait before the next event is raised",
                instance_id, name, name, ONE_SLOT_ISSUE)


def _warn_case(instance_id: str, name: Any, waits: Counter[Any],
               received: Counter[Any]) -> None:
    if not isinstance(name, str) or waits[name]:
        return
    near = sorted(w for w in waits if isinstance(w, str) and w != name
                  and w.casefold() == name.casefold() and waits[w] > received[w])
    if near:
        log.warning(
            "instance '%s': event '%s' matches the open wait for '%s' only when case is "
            "ignored; the Python SDK matches event names exactly, on Azure too (the .NET "
            "SDK ignores case), so that wait is not completed", instance_id, name, near[0])
