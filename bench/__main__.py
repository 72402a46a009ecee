"""``python -m bench`` (``make bench``): every benchmark in one run; writes RESULTS.md + JSON.

Runs, in this process tree and in this order: chain-5 on the local host (``devhost start``
with its defaults, and with one process) and on each peer (repetitions interleaved, host /
host one process / peer / peer, so a change in machine load hits all of them alike; each
system in its own child processes), the SQLite commit limit and the host's
commits per activity, the SDK replay cost, fan-out/fan-in, and the order pipeline end to
end on the host and on DBOS, with and without faults, at full speed and at 20 orders/s,
then on a task hub holding 100,000 completed instances (:mod:`bench.orders`), each host
run with what its orders cost on Azure (:mod:`bench.costs`). Then ``bench/results.json``
and ``bench/RESULTS.md``. ``--only orders`` runs the last alone (with ``--orders 100
--seeded 5000`` in a few minutes); ``--only cost`` only the host's two cost runs, without
and with faults (no peers needed).

The peers (DBOS Transact, the Durable Task SDK) are bench-only packages, never runtime
dependencies; without them this exits with the command that installs them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sqlite3
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent
PEERS = {"dbos": "bench.peers.dbos_chain5", "durabletask": "bench.peers.durabletask_chain5"}
PINS = {"dbos": "3.4.0", "durabletask": "1.12.0"}
"""The peer versions the published figures were measured with (the ``bench`` extra)."""


def missing_peers() -> list[str]:
    """Return the peer packages that are not installed."""
    return [name for name in PINS if importlib.util.find_spec(name) is None]


def _version(package: str) -> str:
    """Return an installed package's version, '' if it is not installed (``--only cost``)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return ""


def machine() -> dict[str, Any]:
    """Describe the machine and the versions the figures were measured with."""
    return {"platform": platform.platform(), "cpus": os.cpu_count(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "versions": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
                         **{p: v for p in ("azure-functions-durable", *PINS)
                            if (v := _version(p))}}}


def loadavg() -> str:
    """Return the 1/5/15-minute load averages, as in /proc/loadavg ('n/a' elsewhere)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def high_load(start: str, end: str, cpus: int) -> str:
    """Describe the load if the 1-minute average reached the CPU count, else ''."""
    readings = [(label, float(v.split()[0])) for label, v in (("start", start), ("end", end))
                if v != "n/a"]
    high = [f"{value:.1f} at {label}" for label, value in readings if value >= cpus]
    return f"{', '.join(high)} on {cpus} CPUs" if high else ""


def chain5_all(n: int, repetitions: int, log: Any) -> dict[str, Any]:
    """Chain-5 on the host and every peer, repetitions interleaved."""
    from bench import chain5
    from bench.peers.common import run_peer, summarize
    from devhost.run.cli import default_workers

    host_runs, single_runs, peer_runs = [], [], {p: [] for p in PEERS}
    for rep in range(repetitions):
        host_runs.append(chain5.run_once_processes(n))
        log(f"chain-5 {rep + 1}/{repetitions}: host {host_runs[-1]['instances_per_s']:.1f}/s")
        single_runs.append(chain5.run_once_processes(n, workers=1))
        log(f"chain-5 {rep + 1}/{repetitions}: host, one process "
            f"{single_runs[-1]['instances_per_s']:.1f}/s")
        for peer, module in PEERS.items():
            peer_runs[peer].append(run_peer(module, n))
            log(f"chain-5 {rep + 1}/{repetitions}: {peer} "
                f"{peer_runs[peer][-1]['instances_per_s']:.1f}/s")
    host = summarize(n, [{**r, "n": n} for r in host_runs])
    host["config"] = {"command": "python -m devhost start (defaults)",
                      "processes": default_workers(), "activity_workers": 4,
                      "synchronous": "FULL"}
    single = summarize(n, [{**r, "n": n} for r in single_runs])
    single["config"] = {**host["config"], "command": "python -m devhost start --workers 1",
                        "processes": 1}
    return {"n": n, "repetitions": repetitions, "host": host, "host_one_process": single,
            "peers": {p: summarize(n, runs) for p, runs in peer_runs.items()}}


def run_all(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """Run every benchmark (or the ``--only`` one) and return the results document."""
    from bench import fanout, orders, replay, report, sqlite_limit

    started, load_start = time.perf_counter(), loadavg()
    info = machine()
    results: dict[str, Any] = {"machine": info, "command": args.command}
    if args.only is None:
        results["chain5"] = chain5_all(args.n, args.repetitions, log)
        host_median = results["chain5"]["host"]["instances_per_s"]["median"]
        results["sqlite_limit"] = sqlite_limit.run(host_median, n=min(args.n, 300))
        log("sqlite limit done")
        results["replay"] = replay.run()
        log("replay cost done")
        results["fanout"] = fanout.run(args.fanout, args.repetitions)
        log(f"fan-out done: median {results['fanout']['seconds']['median']:.2f} s")
    if args.only == "cost":
        results["cost"] = orders.cost_section(args.orders, log)
    else:
        results["orders"] = orders.section(args.orders, log, seeded=args.seeded)
        log("orders done")
    load_end = loadavg()
    results["load"] = {"start": load_start, "end": load_end,
                       "high": high_load(load_start, load_end, info["cpus"] or 1)}
    results["elapsed_s"] = time.perf_counter() - started
    if args.only is None:
        results["comparison"] = report.chain5_comparison(results)
    return results


def orders_default_seeded() -> int:
    """The default size of the large task hub (:data:`bench.orders.SEEDED`)."""
    from bench.orders import SEEDED

    return SEEDED


def main() -> None:
    """Parse the options, check the peers are installed, run, and write the reports."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="chain-5 instances per run")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--fanout", type=int, default=1000, help="activities in the fan-out")
    parser.add_argument("--orders", type=int, default=1000,
                        help="orders per run of the order pipeline (host and peer)")
    parser.add_argument("--seeded", type=int, default=orders_default_seeded(),
                        help="completed instances in the large task hub")
    parser.add_argument("--only", choices=["orders", "cost"], default=None,
                        help="run this section alone (for iterating; the report shows it "
                             "alone)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for RESULTS.md + JSON")
    args = parser.parse_args()
    for name in ("n", "repetitions", "fanout", "orders", "seeded"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: must be at least 1")
    missing = missing_peers() if args.only != "cost" else []
    if missing:
        pins = " ".join(f"'{p}=={PINS[p]}'" for p in missing)
        sys.exit(f"bench: peer packages not installed: {', '.join(missing)}. They are "
                 f"bench-only dependencies (the 'bench' extra); install them with\n"
                 f"    .venv/bin/pip install {pins}")
    defaults = all(getattr(args, k) == parser.get_default(k)
                   for k in ("n", "repetitions", "fanout", "orders", "seeded", "only"))
    args.command = "make bench" if defaults else "python -m bench " + " ".join(sys.argv[1:])

    def log(message: str) -> None:
        print(f"bench: {message}", file=sys.stderr, flush=True)

    from bench import report

    results = run_all(args, log)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    text = report.render(results)
    (args.out / "RESULTS.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
