"""Replay cost of recorded orders: CPU per order of every episode's SDK replay, in process.

Reads the histories of a task hub (a recorded run, e.g. ``python -m demo --orders 60
--no-faults --data-dir DIR``: ``DIR/demo/taskhub.sqlite``), cuts each instance's history
into its episodes (one per ``OrchestratorStarted``) and rebuilds each episode's context JSON
with the host's own :class:`~devhost.orchestration.episode.Episode`: the earlier episodes'
stored texts, then the episode's ``OrchestratorStarted`` and the messages it consumed. Then
it times the app's orchestrator handler (with the host's SDK fast paths) on every episode:
CPU ms per order, the minimum of ``--runs`` runs. ``--save`` writes every episode's
handler output (its actions, custom status and output) and ``--check`` compares them with a
saved file, byte for byte.

``python -m bench.replay_orders TASKHUB [--runs 5] [--save OUT.json | --check OUT.json]``;
without TASKHUB it records a 20-order fault-free demo run in a temporary directory first.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from devhost.app.loader import load_app
from devhost.orchestration import sdk_fastpaths
from devhost.orchestration.episode import Episode
from devhost.taskhub.events import EventType
from devhost.taskhub.store import InstanceRecord, OrchestrationWorkItem, empty_replay_state

APP_DIR = Path(__file__).resolve().parent.parent

RECEIVED = frozenset({
    EventType.ExecutionStarted, EventType.TaskCompleted, EventType.TaskFailed,
    EventType.SubOrchestrationInstanceCompleted, EventType.SubOrchestrationInstanceFailed,
    EventType.TimerFired, EventType.EventRaised, EventType.ExecutionTerminated,
    EventType.ExecutionSuspended, EventType.ExecutionResumed, EventType.GenericEvent})
"""Event types an episode consumes from its inbox (the rest it writes itself)."""


@dataclass(frozen=True)
class Recorded:
    """One recorded orchestration instance: its name and its stored history texts."""

    instance_id: str
    name: str
    history: tuple[str, ...]


def read_taskhub(path: str | Path) -> list[Recorded]:
    """Return every instance of the task hub at ``path`` with its history, by instance id."""
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        names = dict(conn.execute("SELECT instance_id, name FROM instances"))
        rows = conn.execute("SELECT instance_id, event FROM history "
                            "ORDER BY instance_id, position").fetchall()
    finally:
        conn.close()
    histories: dict[str, list[str]] = {}
    for iid, text in rows:
        histories.setdefault(iid, []).append(text)
    return [Recorded(iid, names[iid], tuple(h)) for iid, h in sorted(histories.items())]


def episode_bodies(recorded: Recorded) -> list[str]:
    """Return the context JSON the host sends for each episode of ``recorded``, in order.

    Episode ``k`` replays the stored texts of episodes before it and gets, as new events,
    its ``OrchestratorStarted`` and the received events after it (``IsPlayed`` false, as
    they come from the inbox).
    """
    events = [json.loads(t) for t in recorded.history]
    starts = [i for i, e in enumerate(events) if e["EventType"] == EventType.OrchestratorStarted]
    when = datetime(2030, 1, 1, tzinfo=UTC)
    record = InstanceRecord(recorded.instance_id, recorded.name, "Running", None, None, None,
                            when, when, "bench", None, None, None, None, empty_replay_state())
    bodies = []
    for start in starts:
        new = [dict(events[start], IsPlayed=False)]
        for e in events[start + 1:]:
            if e["EventType"] not in RECEIVED:
                break
            new.append(dict(e, IsPlayed=False))
        item = OrchestrationWorkItem(record, [], [], "bench",
                                     history_json=list(recorded.history[:start]))
        episode = Episode(item, None, when)
        episode.new_events = new
        bodies.append(episode.context_json())
    return bodies


def replay_all(handlers: dict[str, Any], orders: list[tuple[str, list[str]]]) -> list[str]:
    """Run the handler of each order's orchestrator on each of its episodes; the outputs."""
    return [handlers[name](body) for name, bodies in orders for body in bodies]


def measure(taskhub: str | Path, runs: int = 5) -> dict[str, Any]:
    """Time replaying every episode of every instance of ``taskhub``.

    Returns ``cpu_ms_per_order`` (minimum over ``runs``, ``time.process_time``), every run's
    figure, the counts and ``outputs``: each episode's handler output text, in order.
    """
    sdk_fastpaths.install()
    _, index = load_app(APP_DIR)
    handlers = {name: f.func for name, f in index.orchestrators.items()}
    recorded = [r for r in read_taskhub(taskhub) if r.name in handlers]
    orders = [(r.name, episode_bodies(r)) for r in recorded]
    outputs = replay_all(handlers, orders)  # warm up: imports, caches
    per_run = []
    for _ in range(runs):
        t0 = time.process_time()
        again = replay_all(handlers, orders)
        per_run.append((time.process_time() - t0) * 1e3 / max(len(orders), 1))
        if again != outputs:
            raise AssertionError("a replay's output differs from the first replay's")
    return {"instances": len(orders), "episodes": len(outputs),
            "cpu_ms_per_order": min(per_run), "cpu_ms_per_order_runs": per_run,
            "outputs": outputs}


def record(orders: int, data_dir: Path) -> Path:
    """Record a fault-free demo run of ``orders`` orders; return its task hub's path."""
    subprocess.run([sys.executable, "-m", "demo", "--orders", str(orders), "--no-faults",
                    "--data-dir", str(data_dir)], check=True, cwd=APP_DIR,
                   stdout=subprocess.DEVNULL)
    return data_dir / "demo" / "taskhub.sqlite"


def main(argv: list[str] | None = None) -> int:
    """Command line: measure, then save or check the outputs; 1 if a check differs."""
    parser = argparse.ArgumentParser(prog="python -m bench.replay_orders")
    parser.add_argument("taskhub", nargs="?", help="task hub file (default: record one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--record-orders", type=int, default=20)
    parser.add_argument("--save", type=Path, help="write every episode's output here")
    parser.add_argument("--check", type=Path, help="compare every episode's output")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        hub = args.taskhub or record(args.record_orders, Path(tmp))
        result = measure(hub, args.runs)
    outputs = result.pop("outputs")
    if args.save:
        args.save.write_text(json.dumps(outputs, indent=0))
    status = 0
    if args.check:
        saved = json.loads(args.check.read_text())
        differ = [i for i, (a, b) in enumerate(zip(saved, outputs, strict=False)) if a != b]
        result["identical"] = not differ and len(saved) == len(outputs)
        status = 0 if result["identical"] else 1
        if differ:
            result["first_difference"] = {"episode": differ[0], "saved": saved[differ[0]],
                                          "now": outputs[differ[0]]}
    print(json.dumps(result, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
