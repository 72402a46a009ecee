"""Replay cost: microseconds per call of the SDK's orchestrator handler by history length.

Builds the same context JSON the host sends (via the host's own Episode) for a chain
orchestration after k completed activities, and times the SDK handler on it.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.chain5 import APP
from devhost.app.loader import load_app
from devhost.orchestration.episode import Episode
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import InstanceRecord, OrchestrationWorkItem, empty_replay_state


def history_after(k: int, start: datetime) -> list[dict[str, Any]]:
    """History of chain5 after ``k`` completed activities (one episode per activity)."""
    t = start
    events = [event(EventType.OrchestratorStarted, t),
              event(EventType.ExecutionStarted, t, Name="chain5", Input='"0"', Version=None)]
    for i in range(k):
        events += [event(EventType.TaskScheduled, t, i, Name="step", Input=str(i)),
                   event(EventType.OrchestratorCompleted, t)]
        t += timedelta(milliseconds=5)
        events += [event(EventType.OrchestratorStarted, t),
                   event(EventType.TaskCompleted, t, TaskScheduledId=i, Result=str(i + 1))]
    return events


def run(repeat: int = 200) -> dict[str, Any]:
    """Time the SDK handler for histories after 0..5 completed activities."""
    _, index = load_app(APP)
    handler = index.orchestrators["chain5"].func
    start = datetime(2030, 1, 1, tzinfo=UTC)
    record = InstanceRecord("bench", "chain5", "Running", "0", None, None, start, start, "e",
                            None, None, None, None, empty_replay_state())
    per_length = {}
    for k in range(6):
        item = OrchestrationWorkItem(record, history_after(k, start), [], "bench")
        body = Episode(item, handler, start).context_json()
        handler(body)  # warm up
        t0 = time.perf_counter()
        for _ in range(repeat):
            json.loads(handler(body))
        per_length[len(item.history)] = (time.perf_counter() - t0) / repeat * 1e6
    return {"us_per_handler_call_by_history_length": per_length,
            "replay_us_per_chain5_instance": sum(per_length.values())}
