"""Orders/s of the whole order pipeline, end to end, with and without the demo's faults.

Reuses the demo as it is (:mod:`demo.run`: local host and simulator as separate
processes, TPC-H orders submitted by the client, outcome read from the durable records)
and parses its ``summary:`` line: ``python -m demo --faults`` injects
:func:`demo.faults.default_faults`, ``--no-faults`` none.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = REPO / ".data" / "bench"
"""Where the demo's processes keep their files (TPC-H data is cached under it)."""

SUMMARY = re.compile(r"^summary: (.*)$", re.MULTILINE)


def parse_summary(stdout: str) -> dict[str, float | int]:
    """Parse the demo's ``summary: key=value ...`` line into numbers.

    Raises
    ------
    ValueError
        If ``stdout`` has no summary line.
    """
    found = SUMMARY.findall(stdout)
    if not found:
        raise ValueError("demo output: no 'summary:' line")
    pairs = (kv.split("=", 1) for kv in found[-1].split())
    return {k: float(v) if "." in v else int(v) for k, v in pairs}


def run(orders: int = 200, faults: bool = True, timeout_s: float = 900.0,
        data_root: Path = DATA_ROOT) -> dict[str, Any]:
    """Run the demo on ``orders`` TPC-H orders in a child process; return its summary.

    Parameters
    ----------
    orders : int
        Orders to submit.
    faults : bool
        The demo's default faults (True) or none.
    timeout_s : float
        Kill the child after this long.
    data_root : Path
        The demo's ``--data-dir`` (its files go to ``demo/``, TPC-H data to ``tpch/``).

    Raises
    ------
    RuntimeError
        If the demo fails (an order lost, left non-terminal or charged twice) or prints no
        summary; the message carries its output.
    """
    cmd = [sys.executable, "-m", "demo", "--orders", str(orders),
           "--faults" if faults else "--no-faults", "--data-dir", str(data_root)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=REPO)
    try:
        summary = parse_summary(proc.stdout)
    except ValueError:
        summary = None
    if proc.returncode != 0 or summary is None:
        raise RuntimeError(f"demo run failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")
    return {**summary, "orders": orders, "faults": "demo default" if faults else "none"}
