"""Chain-5 on the local host: N instances of 5 sequential activities, one host process.

Instances are created through the task hub as fast as it accepts them, then the host's
background workers run until every instance is Completed. Measured from the first start to
the last completion; the task hub is SQLite with ``synchronous=FULL`` (no durability given
up).
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from clocks import SystemClock
from devhost.host import LocalHost, free_port
from devhost.taskhub.store import TaskHub

APP = Path(__file__).parent / "apps" / "chain5"


def start_and_drain(host: LocalHost, n: int) -> None:
    """Create ``n`` chain-5 instances, run the host's workers until all are Completed."""
    for i in range(n):
        host.taskhub.create_instance("chain5", f"c5-{i:06d}", json.dumps(i))
    host.start()
    try:
        while host.taskhub.count_by_status().get("Completed", 0) < n:
            time.sleep(0.02)
    finally:
        host.stop()


def run_once(n: int, activity_workers: int = 4) -> dict[str, float]:
    """Run ``n`` chain-5 instances once and return throughput figures."""
    with tempfile.TemporaryDirectory(prefix="chain5-") as tmp:
        host = LocalHost(APP, Path(tmp), activity_workers=activity_workers, serve_http=False)
        start = time.perf_counter()
        start_and_drain(host, n)
        elapsed = time.perf_counter() - start
        wrong = [i for i in range(n)
                 if json.loads(host.taskhub.get_instance(f"c5-{i:06d}").output) != i + 5]
        if wrong:
            raise AssertionError(f"{len(wrong)} instances returned a wrong output")
    return {"seconds": elapsed, "instances_per_s": n / elapsed,
            "activities_per_s": 5 * n / elapsed}


def run_once_processes(n: int, workers: int) -> dict[str, float]:
    """Like :func:`run_once`, with ``python -m devhost start --workers N`` (N processes)."""
    with tempfile.TemporaryDirectory(prefix="chain5-") as tmp:
        hub = TaskHub(Path(tmp) / "taskhub.sqlite", SystemClock())
        start = time.perf_counter()
        for i in range(n):
            hub.create_instance("chain5", f"c5-{i:06d}", json.dumps(i))
        proc = subprocess.Popen(
            [sys.executable, "-m", "devhost", "start", "--app-dir", str(APP), "--data-dir",
             tmp, "--port", str(free_port()), "--workers", str(workers)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while hub.count_by_status().get("Completed", 0) < n:
                if proc.poll() is not None:
                    raise RuntimeError("the host exited")
                time.sleep(0.02)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "instances_per_s": n / elapsed,
            "activities_per_s": 5 * n / elapsed}


def run(n: int = 1000, repetitions: int = 3, workers: int = 1) -> dict[str, Any]:
    """Run ``repetitions`` times; min/median/max of instances/s.

    ``workers`` = 1 runs the host in this process; more runs ``devhost start --workers``.
    """
    runs = [run_once(n) if workers == 1 else run_once_processes(n, workers)
            for _ in range(repetitions)]
    rates = sorted(r["instances_per_s"] for r in runs)
    return {"n": n, "repetitions": repetitions, "workers": workers, "runs": runs,
            "instances_per_s": {"min": rates[0], "median": statistics.median(rates),
                                "max": rates[-1]},
            "activities_per_s_median": 5 * statistics.median(rates)}
