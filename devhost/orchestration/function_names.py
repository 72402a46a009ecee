"""The app's function names as the Durable extension knows them, and its refusals.

Host behaviour mirrors azure-functions-durable-extension ``DurableTaskExtension.cs``
(``ThrowIfFunctionDoesNotExist``, ``GetInvalidActivityFunctionMessage``,
``GetInvalidOrchestratorFunctionMessage``) and ``FunctionName.cs`` (ignoring case). A
refused call's ``ArgumentException`` lands in the task of the ``async``
``DurableOrchestrationContext.CallDurableTaskFunctionAsync``, which
``OutOfProcOrchestrationShim.ProcessAsyncActionsV2`` awaits in a catch-all: never
scheduled, it waits forever (azure-functions-durable-python#132). The host does the same,
with a WARNING.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from devhost.orchestration.actions import ActionType
from devhost.taskhub.records import InstanceRecord

log = logging.getLogger("devhost.orchestration")

HANG_ISSUE = "https://github.com/Azure/azure-functions-durable-python/issues/132"
"""Public report of an orchestration that waits forever for a call the extension dropped."""


@dataclass(frozen=True)
class KnownFunctions:
    """The orchestrator and activity names of the app, in registration order."""

    orchestrators: tuple[str, ...] = ()
    activities: tuple[str, ...] = ()

    @classmethod
    def of(cls, orchestrators: Iterable[str], activities: Iterable[str]) -> KnownFunctions:
        """Build from the app's names."""
        return cls(tuple(orchestrators), tuple(activities))

    def has_orchestrator(self, name: str) -> bool:
        """Tell whether the app has an orchestrator ``name`` (case ignored)."""
        return _has(self.orchestrators, name)

    def has_activity(self, name: str) -> bool:
        """Tell whether the app has an activity ``name`` (case ignored)."""
        return _has(self.activities, name)

    def invalid_orchestrator_message(self, name: str) -> str:
        """Return the extension's text for an orchestrator name the app does not have."""
        return _invalid(name, "orchestrator", self.orchestrators)

    def invalid_activity_message(self, name: str) -> str:
        """Return the extension's text for an activity name the app does not have."""
        return _invalid(name, "activity", self.activities)


def _has(names: tuple[str, ...], name: str) -> bool:
    wanted = name.lower() if isinstance(name, str) else name
    return any(n.lower() == wanted for n in names)


def _invalid(name: str, kind: str, known: tuple[str, ...]) -> str:
    message = (f"The function '{name}' doesn't exist, is disabled, or is not an {kind} "
               "function. Additional info: ")
    if known:
        listed = "', '".join(known)
        return message + f"The following are the known {kind} functions: '{listed}'."
    return message + f"No {kind} functions are currently registered!"


def refused_call(kind: ActionType, action: dict[str, Any], inst: InstanceRecord,
                 functions: KnownFunctions | None) -> tuple[str, str] | None:
    """Return ``(call, reason)`` if the extension drops this call, else None.

    Host behaviour mirrors azure-functions-durable-extension
    ``ContextImplementations/DurableOrchestrationContext.cs`` (``CallDurableTaskFunctionAsync``).
    """
    name = action.get("functionName") or ""
    if kind in (ActionType.CallActivity, ActionType.CallActivityWithRetry):
        if functions is not None and not functions.has_activity(name):
            return (f"call_activity({name!r})",
                    functions.invalid_activity_message(name))
        return None
    if kind not in (ActionType.CallSubOrchestrator, ActionType.CallSubOrchestratorWithRetry):
        return None
    call = f"call_sub_orchestrator({name!r})"
    child_id = action.get("instanceId")
    parent_id = inst.parent_instance_id
    if isinstance(child_id, str) and (child_id.lower() == inst.instance_id.lower() or (
            parent_id is not None and child_id.lower() == parent_id.lower())):
        return call, ("The instance ID of a sub-orchestration must be different than the "
                      "instance ID of a parent orchestration.")
    if isinstance(child_id, str) and child_id.startswith("@"):
        return call, "Orchestration instance ids must not start with @"
    if functions is not None and not functions.has_orchestrator(name):
        return call, functions.invalid_orchestrator_message(name)
    return None


def warn_dropped(instance_id: str, what: str, reason: str) -> None:
    """Log that call ``what`` was dropped for ``reason``, so the instance waits forever."""
    log.warning(
        "instance '%s': %s is never scheduled: %s On Azure the Durable extension drops such "
        "a call without failing the orchestration (its ArgumentException is swallowed while "
        "it replays an out-of-process orchestrator's actions), so the orchestrator waits for "
        "it forever, as it does here (%s)", instance_id, what, reason, HANG_ISSUE)
