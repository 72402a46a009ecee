"""The order pipeline end to end, on the local host and on a peer, side by side.

Each run is the demo with ``--metrics-out`` (:mod:`demo.run`); the peer is the same
pipeline on DBOS Transact (:mod:`bench.peers.dbos_orders`). The variants:
docs/benchmarks.md; the figures: docs/performance.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import costs
from bench.peers.common import run_child
from bench.seed import seed_completed
from orders.stores._sqlite import COUNTS_DIR_ENV

REPO = Path(__file__).resolve().parents[1]
DATA_ROOT = REPO / ".data" / "bench"

RATE = 20.0
"""Orders/s of the fixed-rate variants (the p99 goal's offered rate)."""

COST_RATE = 10.0
"""Orders/s of the cost runs: a rate the host keeps up with, so no attempt is retried only
because the machine was saturated."""

SEEDED = 100_000

GROWTH_PAIRS = 3
"""Interleaved (empty hub, seeded hub) pairs of the large task hub's comparison."""

PEER_PAIRS = 3
"""Interleaved (host, peer) pairs without faults at full speed: the ratio-to-peer goal's."""

COUNT_ORDERS = 200
"""Orders of each run of the count cut (the workflow version 1 baseline and today's)."""

BASELINE_VERSION = "1"
"""The workflow version the cut in durable actions per order is measured against."""

SUMMARY = re.compile(r"^summary: (.*)$", re.MULTILINE)


def _number(text: str) -> float | int | str:
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return text


def parse_summary(stdout: str) -> dict[str, float | int | str]:
    """Parse the demo's ``summary: key=value ...`` line (numbers as numbers, ``n/a`` kept).

    Raises
    ------
    ValueError
        If ``stdout`` has no summary line.
    """
    found = SUMMARY.findall(stdout)
    if not found:
        raise ValueError("demo output: no 'summary:' line")
    pairs = (kv.split("=", 1) for kv in found[-1].split())
    return {k: _number(v) for k, v in pairs}


def _labels(faults: bool, rate: float | None) -> dict[str, str]:
    return {"faults": "demo default" if faults else "none",
            "offered": "full speed" if rate is None else f"{rate:g}/s"}


def run(orders: int = 200, faults: bool = True, timeout_s: float = 900.0,
        data_root: Path = DATA_ROOT, rate: float | None = None,
        task_hub_from: Path | None = None,
        env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the demo on ``orders`` TPC-H orders in a child process; return its figures.

    ``env`` holds app settings over the environment. The figures are the demo's
    ``--metrics-out`` document, the summary line's fields, ``faults`` and ``offered``;
    without ``task_hub_from`` also ``cost`` (:func:`bench.costs.collect`, ``per_order``).

    Raises
    ------
    RuntimeError
        If the demo fails or prints no summary, with its output.
    """
    metrics = data_root / "metrics.json"
    metrics.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "demo", "--orders", str(orders),
           "--faults" if faults else "--no-faults", "--data-dir", str(data_root),
           "--metrics-out", str(metrics)]
    cmd += ["--rate", str(rate)] if rate is not None else []
    cmd += ["--task-hub-from", str(task_hub_from)] if task_hub_from is not None else []
    data_dir = data_root / "demo"
    counting = {COUNTS_DIR_ENV: str(data_dir / costs.STORE_OPS_DIR)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=REPO,
                          env={**os.environ, **counting, **(env or {})})
    try:
        summary = parse_summary(proc.stdout)
    except ValueError:
        summary = None
    if proc.returncode != 0 or summary is None or not metrics.exists():
        raise RuntimeError(f"demo run failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")
    result = {**summary, **json.loads(metrics.read_text()), "orders": orders,
              **_labels(faults, rate)}
    if task_hub_from is None:  # a seeded hub's history is not this run's
        counted = costs.collect(data_dir)
        result["cost"] = {"counts": counted, "per_order": costs.per_order(counted, orders)}
    return result


def run_peer(orders: int, faults: bool, rate: float | None = None,
             data_root: Path = DATA_ROOT, timeout_s: float = 900.0) -> dict[str, Any]:
    """Run the DBOS pipeline on the same orders in a child process; return its figures.

    Raises
    ------
    RuntimeError
        If it fails or prints no result line (with its output).
    """
    args = ["--orders", str(orders), "--data-dir", str(data_root)]
    args += ["--faults"] if faults else []
    args += ["--rate", str(rate)] if rate is not None else []
    result = run_child("bench.peers.dbos_orders_client", args, timeout_s)
    return {**result, **_labels(faults, rate)}


def _growth_pairs(n: int, hub: Path, seeded: int, data_root: Path,
                  log: Callable[[str], None]) -> dict[str, Any]:
    """Run :data:`GROWTH_PAIRS` pairs (empty hub, then a copy of ``hub``), interleaved.

    Returns the pair of the median ratio as ``empty``/``seeded``, that ``ratio``, and every
    pair's orders/s and ratio under ``pairs``: one back-to-back pair varied by up to 40%
    either way on the shared 2-core machine, too much for a verdict.
    """
    pairs = []
    for _ in range(GROWTH_PAIRS):
        empty = run(n, False, data_root=data_root)
        full = run(n, False, data_root=data_root, task_hub_from=hub)
        ratio = full["orders_per_s"] / empty["orders_per_s"]
        log(f"orders with {seeded} completed instances: "
            f"{full['orders_per_s']:.1f}/s, empty hub {empty['orders_per_s']:.1f}/s")
        pairs.append({"empty": empty, "seeded": full, "ratio": ratio})
    middle = sorted(pairs, key=lambda p: p["ratio"])[len(pairs) // 2]
    return {**middle, "pairs": [{"empty_orders_per_s": p["empty"]["orders_per_s"],
                                 "seeded_orders_per_s": p["seeded"]["orders_per_s"],
                                 "ratio": p["ratio"]} for p in pairs]}


def _log_pair(log: Callable[[str], None], host: dict[str, Any], peer: dict[str, Any]) -> None:
    log(f"orders {host['faults']}, {host['offered']}: host {host['orders_per_s']:.1f}/s, "
        f"dbos {peer['orders_per_s']:.1f}/s")


def _peer_pairs(n: int, data_root: Path, template: Path,
                log: Callable[[str], None]) -> dict[str, Any]:
    """Run :data:`PEER_PAIRS` (host, peer) pairs without faults at full speed, interleaved.

    Returns the run of the pair with the median orders/s ratio (``host``, ``peer``), and
    every pair's orders/s and ratio, and host CPU ms per order of each side and their
    ``cpu_ratio``, under ``pairs``: one pair's ratio ran from 0.94 to 1.38 on the same code
    within a day. The first host run's task hub is copied to ``template`` (the large hub's
    seed).
    """
    pairs = []
    for i in range(PEER_PAIRS):
        host = run(n, False, data_root=data_root)
        if i == 0:
            shutil.copyfile(data_root / "demo" / "taskhub.sqlite", template)
        peer = run_peer(n, False, None, data_root)
        _log_pair(log, host, peer)
        pairs.append({"host": host, "peer": peer,
                      "ratio": host["orders_per_s"] / peer["orders_per_s"]})
    middle = sorted(pairs, key=lambda p: p["ratio"])[len(pairs) // 2]
    return {**_labels(False, None), "host": middle["host"], "peer": middle["peer"],
            "pairs": [_pair_figures(p["host"], p["peer"]) for p in pairs]}


def _pair_figures(host: dict[str, Any], peer: dict[str, Any]) -> dict[str, float]:
    """One pair's orders/s and host CPU ms per order, each side, and their ratios."""
    host_cpu = host["host"]["cpu_s_per_order"] * 1000
    peer_cpu = peer["host"]["cpu_s_per_order"] * 1000
    return {"host_orders_per_s": host["orders_per_s"], "peer_orders_per_s": peer["orders_per_s"],
            "ratio": host["orders_per_s"] / peer["orders_per_s"],
            "host_cpu_ms_per_order": host_cpu, "peer_cpu_ms_per_order": peer_cpu,
            "cpu_ratio": host_cpu / peer_cpu}


def section(n: int, log: Callable[[str], None], seeded: int = SEEDED,
            data_root: Path = DATA_ROOT) -> dict[str, Any]:
    """Every variant on the host and the peer, then the large task hub and tracing on/off (X8).

    Returns ``n``, ``rate``, ``runs``, ``growth`` and ``tracing``, with orders/s ratios.
    """
    template = data_root / "template-taskhub.sqlite"
    runs = [_peer_pairs(n, data_root, template, log)]
    for faults, rate in ((False, RATE), (True, None), (True, RATE)):
        host = run(n, faults, data_root=data_root, rate=rate)
        peer = run_peer(n, faults, rate, data_root)
        _log_pair(log, host, peer)
        runs.append({**_labels(faults, rate), "host": host, "peer": peer})
    hub = data_root / "seeded-taskhub.sqlite"
    seed_completed(template, hub, seeded)
    try:
        growth = _growth_pairs(n, hub, seeded, data_root, log)
    finally:
        hub.unlink(missing_ok=True)
    untraced = run(n, False, data_root=data_root, env={"TRACE_SAMPLE_RATIO": "0"})
    traced = run(n, False, data_root=data_root, env={"TRACE_SAMPLE_RATIO": "1"})
    log(f"orders traced {traced['orders_per_s']:.1f}/s, untraced "
        f"{untraced['orders_per_s']:.1f}/s")
    return {"n": n, "rate": RATE, "runs": runs, "count_cut": count_cut(log, data_root),
            "growth": {"instances": seeded, **growth},
            "tracing": {"on": traced, "off": untraced,
                        "ratio": traced["orders_per_s"] / untraced["orders_per_s"]}}


def cost_section(n: int, log: Callable[[str], None],
                 data_root: Path = DATA_ROOT) -> dict[str, Any]:
    """The host alone at :data:`COST_RATE`, without and with the demo's faults: an order's cost."""
    runs = []
    for faults in (False, True):
        host = run(n, faults, data_root=data_root, rate=COST_RATE)
        usd = host["cost"]["per_order"]["usd_per_1000"]["total"]
        log(f"cost {host['faults']}: ${usd:.4f} per 1,000 orders")
        runs.append({**_labels(faults, COST_RATE), "host": host})
    return {"n": n, "runs": runs}


def count_cut(log: Callable[[str], None], data_root: Path = DATA_ROOT,
              n: int = COUNT_ORDERS) -> dict[str, Any]:
    """What a fault-free order costs on workflow version 1 and on the app's default version.

    Both runs at :data:`COST_RATE` (a rate the host keeps up with, so no attempt is retried
    for missing its CompleteBy). Returns ``baseline`` and ``current``, each a run's
    ``per_order`` costs (:func:`bench.costs.per_order`) and ``processed`` attempt profile.
    """
    def measured(env: dict[str, str] | None) -> dict[str, Any]:
        host = run(n, False, data_root=data_root, rate=COST_RATE, env=env)
        profile = host["cost"]["counts"]["attempts"].get("order_workflow:processed", {})
        return {"per_order": host["cost"]["per_order"], "processed": profile,
                "outcomes": {k: host.get(k) for k in ("processed", "error", "recovered")}}

    baseline = measured({"WORKFLOW_VERSION": BASELINE_VERSION})
    current = measured(None)
    log(f"count cut: {baseline['per_order']['taskhub']['dts_actions']:.1f} -> "
        f"{current['per_order']['taskhub']['dts_actions']:.1f} DTS actions per order")
    return {"n": n, "rate": COST_RATE, "baseline_version": BASELINE_VERSION,
            "baseline": baseline, "current": current}
