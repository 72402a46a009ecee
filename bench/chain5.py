"""Chain-5 on the local host: N instances of 5 sequential activities.

The host serves first; then the client (this process) creates the instances through the
task hub, one at a time as fast as it accepts them, while the host works. Measured from the
first start to the last completion; the task hub is SQLite with ``synchronous=FULL`` (no
durability given up). :func:`run_once_processes` runs the host as ``devhost start`` in its
own processes (what ``make bench`` reports); :func:`run_once` runs it in this process.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clocks import SystemClock
from devhost.run.host import LocalHost, free_port
from devhost.taskhub.store import TaskHub

APP = Path(__file__).parent / "apps" / "chain5"


def start_and_drain(host: LocalHost, n: int) -> float:
    """Start the host, create ``n`` chain-5 instances, wait until all are Completed.

    The host runs while the instances are created, as the peers' workers do while their
    clients schedule.

    Returns
    -------
    float
        Seconds from the first start to the last completion.
    """
    host.start()
    try:
        start = time.perf_counter()
        for i in range(n):
            host.taskhub.create_instance("chain5", f"c5-{i:06d}", json.dumps(i))
            host.wake()
        while host.taskhub.count_by_status().get("Completed", 0) < n:
            time.sleep(0.02)
        return time.perf_counter() - start
    finally:
        host.stop()


def check_outputs(hub: TaskHub, n: int) -> None:
    """Check that instance ``i`` returned ``i + 5``.

    Raises
    ------
    AssertionError
        If any instance returned something else.
    """
    wrong = [i for i in range(n) if json.loads(hub.get_instance(f"c5-{i:06d}").output) != i + 5]
    if wrong:
        raise AssertionError(f"{len(wrong)} instances returned a wrong output")


def figures(n: int, elapsed: float) -> dict[str, float]:
    """Return seconds, instances/s and activities/s of a run of ``n`` instances."""
    return {"seconds": elapsed, "instances_per_s": n / elapsed,
            "activities_per_s": 5 * n / elapsed}


def run_once(n: int, activity_workers: int = 4) -> dict[str, float]:
    """Run ``n`` chain-5 instances once and return throughput figures."""
    with tempfile.TemporaryDirectory(prefix="chain5-") as tmp:
        host = LocalHost(APP, Path(tmp), activity_workers=activity_workers, serve_http=False)
        elapsed = start_and_drain(host, n)
        check_outputs(host.taskhub, n)
    return figures(n, elapsed)


def run_once_processes(n: int, workers: int | None = None) -> dict[str, float]:
    """Like :func:`run_once`, with the host as ``python -m devhost start`` in its own processes.

    ``workers`` None runs ``devhost start`` with its defaults (one process per CPU, see
    :func:`devhost.run.cli.default_workers`); a number is passed as ``--workers``. This process
    is the client: it creates the instances once every host process serves.
    """
    with tempfile.TemporaryDirectory(prefix="chain5-") as tmp:
        hub = TaskHub(Path(tmp) / "taskhub.sqlite", SystemClock())
        flags = [] if workers is None else ["--workers", str(workers)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "devhost", "start", "--app-dir", str(APP), "--data-dir",
             tmp, "--port", str(free_port()), *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            wait_until_serving(proc)
            start = time.perf_counter()
            for i in range(n):
                hub.create_instance("chain5", f"c5-{i:06d}", json.dumps(i))
            while hub.count_by_status().get("Completed", 0) < n:
                if proc.poll() is not None:
                    raise RuntimeError("the host exited")
                time.sleep(0.02)
            # At the last completion, as the peers measure: the host's graceful stop
            # (about 0.4 s, a third of a 1,000-instance run) is not the chain's.
            elapsed = time.perf_counter() - start
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        check_outputs(hub, n)
    return figures(n, elapsed)


def wait_until_serving(proc: subprocess.Popen[str]) -> None:
    """Wait for ``devhost start``'s "listening" line (printed once every process serves).

    Raises
    ------
    RuntimeError
        If the host exits first.
    """
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("devhost: listening"):
            return
    raise RuntimeError(f"the host exited during start-up (exit code {proc.wait()})")
