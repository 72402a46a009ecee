"""The client side of the DBOS order pipeline: submit, wait, measure (see dbos_orders).

Runs in the benchmark's child process, apart from the DBOS application it measures:
generates the demo's orders, starts the simulator and the application, enqueues each
order with ``DBOSClient`` (workflow id = the order key, so a resubmission is the same
workflow), waits for every final status and prints the figures as one JSON line shaped
like the demo's ``--metrics-out`` document.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import time
from collections import Counter
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from dbos import DBOSClient

from bench.peers import dbos_orders as peer
from bench.peers.common import stop_child
from client.submit import reply_queue_for
from demo import processes
from demo.clients import ClientBatch, offer_times
from demo.faults import default_faults
from demo.latency import Latency, latencies_ms
from demo.resources import HostSampler
from demo.run import run_metrics_host
from demo.stage import DEMO_SETTINGS, REPO, tpch_batches
from simulator.ledger import Ledger

SETTINGS = {k: float(DEMO_SETTINGS[k]) for k in (
    "ORDER_DEADLINE_S", "RETRY_HOLD_BASE_S", "MAX_FAILURES", "AGENT_MAX_ATTEMPTS",
    "AGENT_CALL_TIMEOUT_S", "MAX_PROCESSING", "CIRCUIT_FAILURE_THRESHOLD",
    "CIRCUIT_COOL_DOWN_S")}
DATA_ROOT = REPO / ".data" / "bench"


def schedule(batches: list[ClientBatch], rate: float | None) -> list[tuple[float, str, Any]]:
    """``(due seconds, order key, submission args)`` of every order, in offer order."""
    total = sum(len(b.orders) for b in batches)
    out = []
    for batch in batches:
        dues = offer_times(len(batch.orders), total, rate) if rate else [0.0] * len(batch.orders)
        reply_to = reply_queue_for(batch.client_id)
        out += [(due, key, (key, order.model_dump(mode="json"), reply_to))
                for due, key, order in zip(dues, batch.keys, batch.orders, strict=True)]
    return sorted(out, key=lambda item: item[0])


def _wait(app: Path, expect: int, timeout_s: float) -> dict[str, float]:
    deadline = time.monotonic() + timeout_s
    conn = sqlite3.connect(app, timeout=30)
    try:
        while True:
            rows = dict(conn.execute("SELECT key, MIN(at) FROM replies GROUP BY key"))
            if len(rows) >= expect or time.monotonic() > deadline:
                return rows
            time.sleep(0.2)
    finally:
        conn.close()


def _outcome(data_dir: Path, keys: list[str]) -> tuple[Counter[str], int]:
    conn = sqlite3.connect(data_dir / "app.sqlite")
    try:
        states = Counter(dict(conn.execute("SELECT state, COUNT(*) FROM states GROUP BY state")))
    finally:
        conn.close()
    with Ledger(data_dir / "ledger.sqlite") as ledger:
        duplicates = sum(n - 1 for (_, _, key), n in ledger.effect_counts().items()
                         if n > 1 and key in set(keys))
    return states, duplicates


def run(orders: int, fault_config: dict[str, Any] | None, rate: float | None = None,
        data_root: Path = DATA_ROOT, timeout_s: float = 900.0,
        batches: list[ClientBatch] | None = None) -> dict[str, Any]:
    """Run ``orders`` demo orders through the DBOS pipeline; return the figures.

    Parameters
    ----------
    orders : int
        TPC-H orders (shared by the demo's two clients).
    fault_config : dict or None
        Simulator faults (None: the demo's default faults for these orders; ``{}`` none).
    rate : float, optional
        Orders/s offered; None submits all at once.
    data_root : Path
        Files go to ``data_root/dbos`` (replaced), TPC-H data to ``data_root/tpch``.
    timeout_s : float
        Longest wait for every final status.
    batches : list of ClientBatch, optional
        The orders (default: the demo's TPC-H orders).
    """
    data_dir = data_root / "dbos"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    batches = batches or tpch_batches(orders, data_root)
    keys = [k for b in batches for k in b.keys]
    faults = default_faults(keys) if fault_config is None else fault_config
    sim, sim_url = processes.simulator(data_dir, faults)
    sim.start()
    server = peer.start_server(data_dir, sim_url, SETTINGS)
    sampler = HostSampler(lambda: server.pid if server.poll() is None else None).start()
    client = DBOSClient(system_database_url=peer.dbos_config(data_dir)["system_database_url"])
    try:
        start = time.monotonic()
        for due, key, args in schedule(batches, rate):
            time.sleep(max(0.0, start + due - time.monotonic()))
            client.enqueue({"workflow_name": "order_workflow", "queue_name": peer.QUEUE,
                            "workflow_id": key}, *args)
        finished = _wait(data_dir / "app.sqlite", len(keys), timeout_s)
        created = {w.workflow_id: w.created_at / 1000 for w in client.list_workflows(
            workflow_ids=keys, load_input=False, load_output=False) if w.created_at}
    finally:
        usage = sampler.stop()
        client.destroy()
        stop_child(server)
        sim.stop()
    states, duplicates = _outcome(data_dir, keys)
    elapsed = max(finished.values(), default=0) - min(created.values(), default=0)
    lat = Latency.of(latencies_ms({k: _dt(v) for k, v in created.items()},
                                  {k: _dt(v) for k, v in finished.items()}))
    error = states["Compensated"] + states["Error"]
    return {"orders": len(keys), "processed": states["Processed"], "error": error,
            "recovered": 0, "lost": len(keys) - len(finished),
            "duplicate_effects": duplicates, "unbalanced": 0,
            "orders_per_s": len(finished) / elapsed if elapsed > 0 else 0.0,
            "offered_rate": rate, "ok": len(finished) == len(keys) and duplicates == 0,
            "latency": lat.as_dict() if lat else None,
            "host": run_metrics_host(usage, len(keys)),
            "peer": "dbos", "version": version("dbos"),
            "config": {"system_database": "sqlite, journal_mode=WAL, synchronous=FULL",
                       "app_database": "sqlite, journal_mode=WAL, synchronous=FULL",
                       "queue": f"worker_concurrency={int(SETTINGS['MAX_PROCESSING'])}, "
                                f"polling_interval_sec={peer.POLL_S}",
                       "notification_listener_polling_interval_sec": peer.POLL_S,
                       "max_executor_threads": "unbounded (default)"}}


def _dt(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def main() -> None:
    """``serve`` (the DBOS application) or a measured run (the default)."""
    parser = argparse.ArgumentParser(description=peer.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["run", "serve"], default="run")
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--faults", action="store_true", help="the demo's default faults")
    parser.add_argument("--rate", type=float, default=None, help="orders/s offered")
    parser.add_argument("--data-dir", type=Path, default=DATA_ROOT)
    parser.add_argument("--sim-url", default="")
    parser.add_argument("--settings", default="{}")
    args = parser.parse_args()
    if args.command == "serve":
        peer.serve(args.data_dir, args.sim_url, json.loads(args.settings))
        return
    if args.orders < 1:
        parser.error("--orders: must be at least 1")
    result = run(args.orders, None if args.faults else {}, args.rate, args.data_dir)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
