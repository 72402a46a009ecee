"""Run the demo: local host + simulated services + two clients submitting TPC-H orders.

What it prints, its exit code, ``--rate``, ``--metrics-out`` and ``--chaos``: docs/demo.md.
The outcome is counted in :mod:`demo.summary`, from the audits :mod:`demo.audit` and
:mod:`demo.stock_audit`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer

from client import tpch
from demo import processes
from demo.clients import CLIENTS, split, submit_all
from demo.faults import black_holed_ids, chaos_faults, default_faults
from demo.outcome import exit_unless_ok, report, watch
from demo.resources import HostSampler, HostUsage
from demo.stage import (
    CHAOS_SETTINGS,
    DEMO_SETTINGS,
    REPO,
    console,
    copy_durably,
    load_stock,
    tpch_dir,
)
from demo.summary import Summary
from devhost.run.plain_help import plain_help
from sqlitekit import statement_count

CHAOS_HOST_KILLS = (0.25, 0.6)
"""Fractions of terminal orders at which a chaos run SIGKILLs the host (unless --kill-at)."""
CHAOS_SIMULATOR_KILLS = (0.45,)
"""... and the simulator (unless --kill-simulator-at)."""


def run(orders: int = typer.Option(1000, "--orders", min=1, help="TPC-H orders to submit."),
        data_root: Path = typer.Option(REPO / ".data", "--data-dir"),
        kill_at: list[float] | None = typer.Option(
            None, "--kill-at", min=0.0, max=1.0,
            help="SIGKILL the host when this fraction of orders is terminal, then restart "
                 "it. Repeat for several crashes (--kill-at 0.25 --kill-at 0.6)."),
        kill_simulator_at: list[float] | None = typer.Option(
            None, "--kill-simulator-at", min=0.0, max=1.0,
            help="SIGKILL the simulated services when this fraction of orders is terminal, "
                 "then restart them (the ledger survives). Repeatable."),
        timeout_s: float = typer.Option(900.0, "--timeout-s", min=1.0),
        faults: bool = typer.Option(True, "--faults/--no-faults",
                                    help="Inject the default faults (demo/faults.py)."),
        rate: float | None = typer.Option(
            None, "--rate", min=0.01,
            help="Offer the orders at this many per second (both clients together), "
                 "each sent when due; default: all at once, as fast as they are accepted."),
        metrics_out: Path | None = typer.Option(
            None, "--metrics-out",
            help="Write the run's figures as JSON here: the summary's counts, orders/s, "
                 "latency percentiles (p50/p95/p99/max) and the host processes' CPU "
                 "seconds and peak resident memory (the benchmark reads it)."),
        task_hub_from: Path | None = typer.Option(
            None, "--task-hub-from", exists=True, dir_okay=False,
            help="Start the host on a copy of this task hub file (the benchmark's hub "
                 "that already holds completed instances), copied before the clock starts."),
        chaos: bool = typer.Option(
            False, "--chaos",
            help="Chaos run: every payment request of a few orders black-holed with the "
                 "charge performed, 2% declined, 10% transient errors (instead of the "
                 "default faults); the host SIGKILLed at 25% and 60% and the simulator at "
                 "45% unless --kill-at / --kill-simulator-at say otherwise; settings under "
                 "which a black-holed order gives up in about 25 s."),
        nemesis_seed: int | None = typer.Option(
            None, "--nemesis", min=0,
            help="Nemesis run of this seed: crashes, pauses, clock skew, network faults "
                 "and a full disk at random times (demo/nemesis.py); the schedule is "
                 "printed at the end."),
        linger_s: float = typer.Option(
            0.0, "--linger-s", min=0.0,
            help="Leave the host and the simulator up this many seconds after the summary "
                 "(to look at the dashboard); 0 exits at once.")) -> None:
    """Submit TPC-H orders as two clients to the local system with faults; report the outcome.

    Exits 1 if an order is lost, left non-terminal, has a side effect twice,
    or is unbalanced by the ledger audit (demo/audit.py).
    Unbalanced orders are printed above the summary lines, with the reason.
    """
    if nemesis_seed is not None:
        from demo.nemesis_run import run_nemesis

        exit_unless_ok(run_nemesis(nemesis_seed, orders, data_root, timeout_s,
                                    min(max(1000, orders), 10_000)))
        return
    data_dir = data_root / "demo"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    host_kills = sorted(kill_at or (CHAOS_HOST_KILLS if chaos else ()))
    simulator_kills = sorted(kill_simulator_at or (CHAOS_SIMULATOR_KILLS if chaos else ()))
    folder = tpch_dir(orders, data_root)
    batches = split(list(tpch.load_orders(folder, orders)))
    load_stock(data_dir, folder, batches, ample=not (faults or chaos))
    keys = [k for b in batches for k in b.keys]
    fault_config = chaos_faults(keys) if chaos else default_faults(keys) if faults else {}
    sim, sim_url = processes.simulator(data_dir, fault_config)
    settings = {**DEMO_SETTINGS, **(CHAOS_SETTINGS if chaos else {})}
    # Admission control (MAX_IN_FLIGHT, per client too) is not one of the demo's faults:
    # room for all, each client's share included.
    room = min(max(1000, orders), 10_000)
    # With --metrics-out, the host's processes count their SQL statements (the figures).
    counted = data_dir / "statement-counts" if metrics_out is not None else None
    host = processes.host(REPO, data_dir, {**settings, **processes.service_urls(sim_url),
                                           "MAX_IN_FLIGHT": str(room * len(CLIENTS)),
                                           "MAX_IN_FLIGHT_PER_CLIENT": str(room),
                                           **counting_env(counted)})
    if chaos:
        holes = sorted(black_holed_ids(fault_config))
        console.print(f"demo: chaos: every payment request of {', '.join(holes)} is "
                      f"black-holed (charge performed); faults in {data_dir / 'faults.json'}")
    if task_hub_from is not None:
        copy_durably(task_hub_from, data_dir / "taskhub.sqlite")
    sim.start()
    host.start()
    console.print(f"demo: local host and simulator up; logs in {data_dir}")
    dashboard = urlsplit(host.ready_url)._replace(path="/api/ops/dashboard", query="").geturl()
    console.print(f"demo: operator dashboard at {dashboard}")
    sampler = HostSampler(lambda: host.proc.pid if host.proc and host.proc.poll() is None
                          else None).start()
    started = time.monotonic()
    crashes = [(at, "host", host) for at in host_kills] + \
              [(at, "simulator", sim) for at in simulator_kills]
    try:
        submit_all(data_dir, batches, rate=rate)
        console.print("demo: submitted " + ", ".join(
            f"{len(b.orders)} orders as client '{b.client_id}'" for b in batches)
            + f" ({len(keys) - len({o.order_id for b in batches for o in b.orders})} "
              "OrderIDs used by two clients)")
        heard = watch(data_dir, batches, crashes, timeout_s)
        summary = report(data_dir, batches, heard, time.monotonic() - started)
        if linger_s > 0:
            console.print(f"demo: host up for {linger_s:g} s more (Ctrl-C ends): {dashboard}")
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(linger_s)
    except KeyboardInterrupt:
        console.print("demo: interrupted; stopping the host and the simulator")
        raise typer.Exit(130) from None
    finally:
        usage = sampler.stop()
        host.stop()
        sim.stop()
    if metrics_out is not None:
        metrics_out.write_text(json.dumps(run_metrics(summary, usage, rate, counted),
                                          indent=2))
    exit_unless_ok(summary)


def counting_env(folder: Path | None) -> dict[str, str]:
    """Return the host's environment entry that has it count SQL statements into ``folder``."""
    return {} if folder is None else {statement_count.COUNT_SETTING: str(folder)}


def run_metrics(summary: Summary, usage: HostUsage, rate: float | None,
                counted: Path | None = None) -> dict[str, Any]:
    """Return the run's figures for ``--metrics-out`` (JSON; see :func:`run_metrics_host`).

    ``counted``: the folder the host's processes wrote their statement counts to.
    """
    counts = dict(kv.split("=", 1) for kv in summary.counts().split())
    return {**{k: int(v) for k, v in counts.items()},
            "stock_unbalanced": len(summary.stock_unbalanced),
            "out_of_stock": summary.out_of_stock, "orders_per_s": summary.orders_per_s,
            "offered_rate": rate, "ok": summary.ok,
            "latency": summary.latency.as_dict() if summary.latency else None,
            "host": run_metrics_host(usage, summary.orders, counted)}


def run_metrics_host(usage: HostUsage, orders: int, counted: Path | None = None
                     ) -> dict[str, Any]:
    """CPU seconds (in all, per order), peak RSS (MiB) and trips of the host processes.

    ``rss_mib_by_fifth`` is the peak RSS of the host processes in each fifth of the run's
    samples, in time order: with orders completing all along, a later fifth higher than
    the earlier ones says memory grows with completed orders. With ``counted``, the trips
    per order the host's processes wrote there (:mod:`sqlitekit.statement_count`): SQL
    statements (in all and by SQLite file) and context switches, voluntary (a thread
    waits) and involuntary (preemption: the load).
    """
    mib, per = 1024 * 1024, max(1, orders)
    n = len(usage.rss)
    fifths = [max((b for _, b in usage.rss[i * n // 5:(i + 1) * n // 5]), default=0) / mib
              for i in range(5)]
    figures = {"cpu_s": usage.cpu_seconds, "cpu_s_per_order": usage.cpu_seconds / per,
               "processes": len(usage.cpu_s), "peak_rss_mib": usage.peak_rss_bytes / mib,
               "rss_mib_by_fifth": fifths, "samples": n}
    if counted is not None:
        by_file, switches = statement_count.read_counts(counted,
                                                        lambda pid: pid in usage.cpu_s)
        figures |= {"statements_per_order": sum(by_file.values()) / per,
                    "statements_per_order_by_file": {
                        name: count / per for name, count in sorted(by_file.items())},
                    "voluntary_switches_per_order": switches.get("voluntary", 0) / per,
                    "involuntary_switches_per_order": switches.get("involuntary", 0) / per}
    return figures


def cli() -> typer.Typer:
    """Return the ``python -m demo`` command, with plain help (rich cuts long option names)."""
    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.command()(run)
    return plain_help(app)


def main() -> None:
    """Entry point of ``python -m demo``."""
    cli()()
