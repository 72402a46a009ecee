"""Which of an instance's waiting messages one episode takes (D3, D4).

The SDK numbers a ``call_*_with_retry``'s timers and reschedules while it processes a failure
or retry timer, so at most one such event is admitted per episode, as its first new event;
control messages (terminate, suspend, resume) are taken alone.
"""

from __future__ import annotations

from typing import Any

from devhost.taskhub.events import EventType
from devhost.taskhub.store import InboxMessage, OrchestrationWorkItem

CONTROL_KINDS = ("terminate", "suspend", "resume")
"""Inbox kinds that control an instance instead of feeding its history."""


def _retry_relevant(m: InboxMessage, retries: dict[str, dict[str, Any]]) -> bool:
    ev = m.event
    kind = ev["EventType"]
    for r in retries.values():
        if kind in (EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed) \
                and ev.get("TaskScheduledId") == r["task_id"]:
            return True
        if kind == EventType.TimerFired and ev.get("TimerId") == r.get("timer_id") \
                and r["attempt"] < r["max"]:
            return True
    return False


def select_batch(item: OrchestrationWorkItem, max_batch: int) -> tuple[list[InboxMessage],
                                                                       list[InboxMessage]]:
    """Return the messages this episode takes (at most ``max_batch``) and the stale ones."""
    inst = item.instance
    current, stale = [], []
    for m in item.messages:
        if m.execution_id is not None and m.execution_id != inst.execution_id:
            stale.append(m)
        else:
            current.append(m)
    if inst.runtime_status == "Suspended":
        current = [m for m in current if m.kind in ("resume", "terminate", "suspend")]
    if not item.has_history():
        starts = [m for m in current if m.kind == "start"]
        current = starts[:1] + [m for m in current if m.kind != "start"]
    elif any(m.kind == "start" for m in current):
        # A start message for an execution that has history already: a duplicate.
        stale += [m for m in current if m.kind == "start"]
        current = [m for m in current if m.kind != "start"]
    if current and current[0].kind in CONTROL_KINDS:
        return current[:1], stale
    retries = inst.replay_state.get("retries", {})
    batch: list[InboxMessage] = []
    for m in current[:max_batch]:
        if m.kind in CONTROL_KINDS:
            break
        if batch and _retry_relevant(m, retries):
            break
        batch.append(m)
    return batch, stale
