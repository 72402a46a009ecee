"""What every peer benchmark shares: its command line, its result line and its runner.

A peer runs in a child process (``python -m bench.peers.<module> --n N``) that prints one
JSON line starting with ``{``; :func:`run_peer` starts it, enforces a timeout and parses
that line, so a crashed or hung peer fails the benchmark with its own output attached.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from typing import Any

STEPS = 5
"""Activities (steps) per chain-5 instance."""


def figures(n: int, seconds: float, **config: Any) -> dict[str, Any]:
    """Return the result document of one chain-5 run.

    Parameters
    ----------
    n : int
        Instances (workflows) completed.
    seconds : float
        From the first start to the last completion.
    **config
        The peer's configuration, reported as is (name, versions, settings).
    """
    return {"n": n, "seconds": seconds, "instances_per_s": n / seconds,
            "activities_per_s": STEPS * n / seconds, **config}


def main(run: Callable[[int], dict[str, Any]], description: str) -> None:
    """Parse ``--n``, call ``run(n)`` and print its result as one JSON line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n", type=int, default=1000, help="chain-5 instances")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("--n: must be at least 1")
    print(json.dumps(run(args.n)), flush=True)


def run_peer(module: str, n: int, timeout_s: float = 900.0) -> dict[str, Any]:
    """Run ``python -m <module> --n n`` in a child process and return its JSON result.

    Raises
    ------
    RuntimeError
        If the child exits non-zero, times out or prints no JSON line (with its output).
    """
    return run_child(module, ["--n", str(n)], timeout_s)


def run_child(module: str, args: list[str], timeout_s: float = 900.0) -> dict[str, Any]:
    """Run ``python -m <module> <args>`` in a child process and return its JSON line.

    Raises
    ------
    RuntimeError
        If the child exits non-zero, times out or prints no JSON line (with its output).
    """
    cmd = [sys.executable, "-m", module, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{module} did not finish within {timeout_s:.0f} s") from exc
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{module} failed (exit {proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def repeat(module: str, n: int, repetitions: int) -> dict[str, Any]:
    """Run a peer ``repetitions`` times, each in a fresh process; min/median/max of instances/s.

    Returns
    -------
    dict
        ``n``, ``repetitions``, ``runs`` (each child's document), ``instances_per_s``
        (min/median/max), ``activities_per_s_median`` and ``config`` (the first run's
        settings).
    """
    return summarize(n, [run_peer(module, n) for _ in range(repetitions)])


def summarize(n: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Min/median/max of instances/s over ``runs``, in the shape :mod:`bench.chain5` uses."""
    rates = sorted(r["instances_per_s"] for r in runs)
    config = {k: v for k, v in runs[0].items()
              if k not in ("n", "seconds", "instances_per_s", "activities_per_s")}
    return {"n": n, "repetitions": len(runs), "runs": runs,
            "instances_per_s": {"min": rates[0], "median": statistics.median(rates),
                                "max": rates[-1]},
            "activities_per_s_median": STEPS * statistics.median(rates), "config": config}


def stop_child(proc: subprocess.Popen[str], timeout_s: float = 30.0) -> None:
    """Close a peer process's standard input (its signal to stop), wait, kill if it hangs."""
    if proc.stdin:
        proc.stdin.close()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
