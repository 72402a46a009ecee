"""The actions the Python SDK returns, flattened and typed.

The SDK (replay schema V2) answers each episode with every action since the execution
began, in yield order; ``task_all``/``task_any`` are compound WhenAll/WhenAny actions. Every
atomic action but WaitForExternalEvent takes the next task sequence number, which the host
gives its scheduling event as ``EventId`` so completions find their task.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import Any


class ActionType(IntEnum):
    """Action types of the SDK's out-of-process protocol."""

    CallActivity = 0
    CallActivityWithRetry = 1
    CallSubOrchestrator = 2
    CallSubOrchestratorWithRetry = 3
    ContinueAsNew = 4
    CreateTimer = 5
    WaitForExternalEvent = 6
    CallEntity = 7
    CallHttp = 8
    SignalEntity = 9
    WhenAny = 11
    WhenAll = 12


COMPOUND = (ActionType.WhenAny, ActionType.WhenAll)
HTTP_ACTIVITY = "BuiltIn::HttpActivity"
"""Name of the host's built-in activity that performs CallHttp (as the extension names it)."""


class UnsupportedActionError(Exception):
    """The orchestrator used an action this host cannot run; the instance fails with it."""


def flatten(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the atomic actions of the SDK's state, compound ones unwrapped depth-first."""

    def walk(action: dict[str, Any]) -> Iterator[dict[str, Any]]:
        kind = ActionType(action["actionType"])
        if kind in COMPOUND:
            for child in action.get("compoundActions", []):
                yield from walk(child)
        else:
            yield action

    out: list[dict[str, Any]] = []
    for group in state.get("actions") or []:
        for action in group if isinstance(group, list) else [group]:
            out.extend(walk(action))
    return out


def takes_sequence_number(action: dict[str, Any]) -> bool:
    """Tell whether the SDK numbers this action (external-event waits are keyed by name)."""
    return ActionType(action["actionType"]) != ActionType.WaitForExternalEvent
