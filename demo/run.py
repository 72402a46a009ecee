"""Run the demo: local host + simulated services + two clients submitting TPC-H orders.

What it prints, its exit code, ``--rate``, ``--metrics-out`` and ``--chaos``: docs/demo.md.
The outcome is counted in :mod:`demo.summary`, from the audits :mod:`demo.audit` and
:mod:`demo.stock_audit`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from client import tpch
from client.watch import WatchResult
from demo import latency, processes
from demo.clients import CLIENTS, ClientBatch, rejected_keys, split, submit_all, watch_all
from demo.faults import black_holed_ids, chaos_faults, default_faults
from demo.resources import HostSampler, HostUsage
from demo.summary import Summary, read_records, summarize
from orders.models import ProcessState

console = Console()
REPO = Path(__file__).resolve().parents[1]
DEMO_SETTINGS = {
    "ORDER_DEADLINE_S": "10", "START_GRACE_S": "20", "RETRY_HOLD_BASE_S": "1",
    "MAX_FAILURES": "5", "AGENT_MAX_ATTEMPTS": "4", "AGENT_CALL_TIMEOUT_S": "2",
    "MAX_PROCESSING": "60",
    "CIRCUIT_FAILURE_THRESHOLD": "5", "CIRCUIT_COOL_DOWN_S": "2",
    "STARTER_SCHEDULE": "*/1 * * * * *", "SUPERVISOR_SCHEDULE": "*/1 * * * * *",
    "ORDER_CLIENTS": ",".join(CLIENTS),
}
CHAOS_SETTINGS = {
    "ORDER_DEADLINE_S": "5", "MAX_FAILURES": "4", "RETRY_HOLD_BASE_S": "0.5",
    "AGENT_CALL_TIMEOUT_S": "1", "COMPENSATION_DEADLINE_S": "5",
    "MAX_COMPENSATION_FAILURES": "2",
}
"""Overrides of :data:`DEMO_SETTINGS` in a chaos run: a black-holed order gives up after 4
attempts of 5 s (about 25 s), and a compensation whose undo is never answered after 2."""
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

        _exit_unless_ok(run_nemesis(nemesis_seed, orders, data_root, timeout_s,
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
    host = processes.host(REPO, data_dir, {**settings, **processes.service_urls(sim_url),
                                           "MAX_IN_FLIGHT": str(room * len(CLIENTS)),
                                           "MAX_IN_FLIGHT_PER_CLIENT": str(room)})
    if chaos:
        holes = sorted(black_holed_ids(fault_config))
        console.print(f"demo: chaos: every payment request of {', '.join(holes)} is "
                      f"black-holed (charge performed); faults in {data_dir / 'faults.json'}")
    if task_hub_from is not None:
        _copy_durably(task_hub_from, data_dir / "taskhub.sqlite")
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
            + f" ({len(keys) - len({o.order_key for b in batches for o in b.orders})} "
              "OrderIDs used by two clients)")
        heard = _watch(data_dir, batches, crashes, timeout_s)
        summary = _report(data_dir, batches, heard, time.monotonic() - started)
        if linger_s > 0:
            console.print(f"demo: host up for {linger_s:g} s more (Ctrl-C ends): {dashboard}")
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(linger_s)
    finally:
        usage = sampler.stop()
        host.stop()
        sim.stop()
    if metrics_out is not None:
        metrics_out.write_text(json.dumps(run_metrics(summary, usage, rate), indent=2))
    _exit_unless_ok(summary)


def _exit_unless_ok(summary: Summary) -> None:
    """Exit 1, saying so, unless every order ended terminal and balanced."""
    if not summary.ok:
        console.print("[red]demo failed: an order was lost, left non-terminal, had a side "
                      "effect twice, or is unbalanced in the ledger or the stock[/red]")
        raise typer.Exit(1)


def _copy_durably(source: Path, target: Path) -> None:
    """Copy a file and fsync the copy, so the timed run does not pay the copy's writeback.

    A task hub of 100,000 instances is 1.6 GB: left in the page cache, its writeback
    competes with the host's own fsyncs (``synchronous=FULL``) during the run.
    """
    shutil.copyfile(source, target)
    with target.open("rb+") as copy:
        os.fsync(copy.fileno())


def tpch_dir(orders: int, data_root: Path) -> Path:
    """Generate (or reuse) the TPC-H data for ``orders`` orders under ``data_root/tpch``."""
    scale = max(0.01, round(orders / 1_500_000 * 1.05, 4))
    console.print(f"demo: generating TPC-H data (scale factor {scale}) ...")
    return tpch.generate(scale, data_root / "tpch" / f"sf-{scale}")


def tpch_batches(orders: int, data_root: Path) -> list[ClientBatch]:
    """Share ``orders`` TPC-H orders among the clients of :data:`~demo.clients.CLIENTS`."""
    return split(list(tpch.load_orders(tpch_dir(orders, data_root), orders)))


def load_stock(data_dir: Path, tpch_folder: Path, batches: list[ClientBatch], *,
               ample: bool = False) -> int:
    """Load the inventory of ``data_dir`` with the stock of the batches' SKUs; return SKUs.

    The stock is PARTSUPP's, scaled (:func:`client.tpch.load_stock`); the local host's
    inventory lives in the state store's file, as :mod:`orders.runtime` opens it. With
    ``ample`` (a run without faults) each SKU also gets what all the orders ask of it, so
    no order runs out of stock: running out is one of the demo's faults.
    """
    from orders.stores import create_stores

    wanted: dict[str, int] = {}
    for line in (line for b in batches for o in b.orders for line in o.lines):
        wanted[line.sku] = wanted.get(line.sku, 0) + line.quantity
    stock = tpch.load_stock(tpch_folder, wanted)
    if ample:
        stock = {sku: stock.get(sku, 0) + units for sku, units in wanted.items()}
    stores = create_stores("sqlite", orders_path=data_dir / "orders.sqlite",
                           state_path=data_dir / "state.sqlite")
    try:
        loaded = stores.inventory.load(stock)
    finally:
        stores.close()
    console.print(f"demo: stock of {loaded} SKUs loaded (TPC-H ps_availqty x "
                  f"{tpch.STOCK_SCALE:g})")
    return loaded


def _report(data_dir: Path, batches: list[ClientBatch], heard: dict[str, WatchResult],
            elapsed: float) -> Summary:
    """Print the unbalanced orders, one line per client, then the run's summary line."""
    keys = [k for b in batches for k in b.keys]
    rejected = set().union(*(rejected_keys(b, heard.get(b.client_id)) for b in batches))
    records = read_records(data_dir, keys)
    summary = summarize(records, keys, rejected, elapsed)
    summary.latency = latency.measure(data_dir, batches, heard)
    for line in summary.unbalanced_lines():
        print(line, flush=True)
    for batch in batches:
        mine = summarize(records, batch.keys, rejected, elapsed, whole_run=False)
        print(mine.client_line(batch.client_id, heard.get(batch.client_id),
                               {o.order_key for o in batch.orders}), flush=True)
    print(summary.line(), flush=True)
    hint = trace_hint(data_dir, records.states)
    if hint:
        console.print(hint, highlight=False, soft_wrap=True)
    return summary


def trace_hint(data_dir: Path, states: dict[str, Any]) -> str | None:
    """Return the command showing the trace (X8) of a recovered, else compensated, else any."""
    def rank(item: tuple[str, Any]) -> int:
        record = item[1]
        if record.process_state == ProcessState.PROCESSED and record.attempt > 1:
            return 0
        return 1 if record.process_state == ProcessState.COMPENSATED else 2

    present = sorted(((k, r) for k, r in states.items() if r is not None), key=rank)
    if not present:
        return None
    key, how = present[0][0], ("recovered", "compensated", "")[rank(present[0])]
    client_id, _, order_id = key.partition("~")
    where = data_dir.relative_to(Path.cwd()) if data_dir.is_relative_to(Path.cwd()) \
        else data_dir
    return (f"demo: the trace of {how + ' ' if how else ''}order {order_id} of client "
            f"{client_id}: .venv/bin/python -m opscli --data-dir {where} trace {order_id} "
            f"--client {client_id}")


def run_metrics(summary: Summary, usage: HostUsage, rate: float | None) -> dict[str, Any]:
    """Return the run's figures for ``--metrics-out`` (JSON; see :func:`run_metrics_host`)."""
    counts = dict(kv.split("=", 1) for kv in summary.counts().split())
    return {**{k: int(v) for k, v in counts.items()},
            "stock_unbalanced": len(summary.stock_unbalanced),
            "out_of_stock": summary.out_of_stock, "orders_per_s": summary.orders_per_s,
            "offered_rate": rate, "ok": summary.ok,
            "latency": summary.latency.as_dict() if summary.latency else None,
            "host": run_metrics_host(usage, summary.orders)}


def run_metrics_host(usage: HostUsage, orders: int) -> dict[str, Any]:
    """CPU seconds (in all, per order) and peak RSS (MiB) of the host processes.

    ``rss_mib_by_fifth`` is the peak RSS of the host processes in each fifth of the run's
    samples, in time order: with orders completing all along, a later fifth higher than
    the earlier ones says memory grows with completed orders.
    """
    mib = 1024 * 1024
    n = len(usage.rss)
    fifths = [max((b for _, b in usage.rss[i * n // 5:(i + 1) * n // 5]), default=0) / mib
              for i in range(5)]
    return {"cpu_s": usage.cpu_seconds, "cpu_s_per_order": usage.cpu_seconds / max(1, orders),
            "processes": len(usage.cpu_s), "peak_rss_mib": usage.peak_rss_bytes / mib,
            "rss_mib_by_fifth": fifths, "samples": n}


def _watch(data_dir: Path, batches: list[ClientBatch],
           crashes: list[tuple[float, str, processes.Process]],
           timeout_s: float) -> dict[str, WatchResult]:
    """Watch every client's reply queue; SIGKILL and restart each process of ``crashes``.

    ``crashes`` holds ``(fraction, name, process)``: the process is killed once that
    fraction of all orders is terminal, in fraction order. Kills and restarts happen in
    this (the main) thread, never in a client's watcher thread: see
    :func:`demo.clients.watch_all`.
    """
    expect = sum(len(b.orders) for b in batches)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    due = sorted(crashes, key=lambda c: c[0])
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("orders terminal", total=expect)

        def show(terminal: int) -> None:
            progress.update(task, completed=terminal)
            while due and terminal >= due[0][0] * expect:
                _, name, proc = due.pop(0)
                proc.kill()
                progress.console.print(f"demo: {name} SIGKILLed at {terminal}/{expect}"
                                       f" orders terminal; restarting it")
                proc.start()

        return watch_all(data_dir, batches, timedelta(seconds=timeout_s), show)


def main() -> None:
    """Entry point of ``python -m demo``."""
    typer.run(run)
