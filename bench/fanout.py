"""Fan-out/fan-in on the local host: one orchestration, N activities, one ``task_all``.

Uses ``fan_out`` from the chain-5 benchmark app: it schedules N ``step`` activities in
one episode and completes when all N results are in, so the figure covers scheduling N
work items in one commit, running them on the host's activity workers, and the episodes
that replay an N-task history as results arrive.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.chain5 import APP
from devhost.run.host import LocalHost
from devhost.taskhub.events import EventType

INSTANCE = "fan-out"


def run_once(n: int = 1000, activity_workers: int = 4, timeout_s: float = 600.0) -> dict[str, Any]:
    """Run one fan-out of ``n`` activities and return the total seconds.

    Returns
    -------
    dict
        ``n``, ``seconds`` (from start to completion), ``activities_per_s``, ``episodes``
        (orchestrator episodes it took).

    Raises
    ------
    AssertionError
        If the orchestration does not complete with the sum of the N results.
    TimeoutError
        If it has not completed within ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="fanout-") as tmp:
        host = LocalHost(APP, Path(tmp), activity_workers=activity_workers, serve_http=False)
        start = time.perf_counter()
        host.taskhub.create_instance("fan_out", INSTANCE, json.dumps(n))
        host.start()
        try:
            while host.taskhub.count_by_status().get("Completed", 0) < 1:
                if time.perf_counter() - start > timeout_s:
                    raise TimeoutError(f"fan-out of {n} not complete after {timeout_s} s")
                time.sleep(0.01)
            elapsed = time.perf_counter() - start  # at completion: the host's stop is not it
        finally:
            host.stop()
        record = host.taskhub.get_instance(INSTANCE)
        output = json.loads(record.output)
        episodes = sum(1 for e in host.taskhub.get_history(INSTANCE)
                       if e.get("EventType") == EventType.OrchestratorStarted)
    expected = sum(i + 1 for i in range(n))
    if output != expected:
        raise AssertionError(f"fan-out returned {output}, expected {expected}")
    return {"n": n, "seconds": elapsed, "activities_per_s": n / elapsed, "episodes": episodes}



def run(n: int = 1000, repetitions: int = 3) -> dict[str, Any]:
    """Run :func:`run_once` ``repetitions`` times; min/median/max of the total seconds.

    Returns
    -------
    dict
        ``n``, ``runs``, ``seconds`` (min/median/max) and ``episodes`` of the median run.
    """
    runs = sorted((run_once(n) for _ in range(repetitions)), key=lambda r: r["seconds"])
    middle = runs[len(runs) // 2]
    return {"n": n, "repetitions": repetitions, "runs": runs,
            "seconds": {"min": runs[0]["seconds"],
                        "median": statistics.median(r["seconds"] for r in runs),
                        "max": runs[-1]["seconds"]},
            "episodes": middle["episodes"]}
