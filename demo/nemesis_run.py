"""The nemesis run of the demo (``python -m demo --nemesis SEED``; :mod:`demo.nemesis`).

The host's data folder is a small tmpfs of its own where the run may mount one (root on
Linux), so ``disk_full`` can fill it; the simulator's files (ledger, faults, log) and the
host's log live beside it, on the disk of ``--data-dir``, as a remote service's would.
At the end the data folder is copied back to a plain folder, so it can be looked at.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import typer

from client import tpch
from demo import nemesis, processes
from demo.clients import ClientBatch, split, submit_all
from demo.faults import chaos_faults
from demo.nemesis import Nemesis, Schedule
from demo.outcome import report, watch
from demo.stage import CHAOS_SETTINGS, DEMO_SETTINGS, REPO, console, load_stock, tpch_dir
from demo.summary import Summary

HORIZON_BASE_S = 20.0
HORIZON_PER_ORDER_S = 0.12
"""The schedule spans about ``HORIZON_BASE_S + orders * HORIZON_PER_ORDER_S`` seconds."""


def run_nemesis(seed: int, orders: int, data_root: Path, timeout_s: float,
                room: int) -> Summary:
    """Run the demo under the nemesis of ``seed``; return the summary (printed already).

    Exits 1 if the host or the simulator exited by itself (a crash) during the run.
    """
    say = console.print
    data_dir, side = data_root / "demo", data_root / "demo-side"
    _fresh(data_dir)
    shutil.rmtree(side, ignore_errors=True)
    side.mkdir(parents=True)
    why_not = nemesis.mount_small_fs(data_dir, fs_size_mb(orders))
    mounted = why_not is None
    say(f"demo: nemesis {seed}: data on a {fs_size_mb(orders)} MB tmpfs" if mounted else
        f"demo: nemesis {seed}: disk_full skipped: cannot mount a file system ({why_not})")
    folder = tpch_dir(orders, data_root)
    batches = split(list(tpch.load_orders(folder, orders)))
    load_stock(data_dir, folder, batches)
    keys = [k for b in batches for k in b.keys]
    schedule = nemesis.plan(seed, keys, HORIZON_BASE_S + orders * HORIZON_PER_ORDER_S,
                            disk=mounted)
    base = chaos_faults(keys, seed=seed)
    sim, sim_url = processes.simulator(data_dir, base, files_dir=side)
    (data_dir / "ledger.sqlite").symlink_to(side / "ledger.sqlite")
    settings = {**DEMO_SETTINGS, **CHAOS_SETTINGS,
                **nemesis.clock_env(schedule), **processes.service_urls(sim_url),
                "MAX_IN_FLIGHT": str(room * len(batches)),
                "MAX_IN_FLIGHT_PER_CLIENT": str(room)}
    host = processes.host(REPO, data_dir, settings, log_dir=side)
    sim.start()
    host.start()
    say(f"demo: nemesis {seed}: host and simulator up; logs in {side}")
    started = time.monotonic()
    chaos = Nemesis(schedule, host, sim, sim_url, base, data_dir, disk=mounted, say=say)
    try:
        summary = _run(chaos, data_dir, batches, timeout_s, started)
    finally:
        chaos.finish()
        chaos.wait_healed(60)
        host.stop()
        sim.stop()
        chaos.close()
        if mounted:
            _keep_and_unmount(data_dir)
    _print_schedule(schedule, chaos)
    if chaos.crashes:
        print(f"nemesis {seed}: crashes: {'; '.join(chaos.crashes)}", flush=True)
        console.print("[red]demo failed: a process of the run crashed by itself"
                               "[/red]")
        raise typer.Exit(1)
    return summary


def _run(chaos: Nemesis, data_dir: Path, batches: list[ClientBatch], timeout_s: float,
         started: float) -> Summary:
    """Submit, watch under the nemesis, heal, then report."""
    began = datetime.now(UTC)
    chaos.start()
    submit_all(data_dir, batches)
    heard = watch(data_dir, batches, [], timeout_s)
    chaos.finish()
    chaos.wait_healed(60)
    summary = report(data_dir, batches, heard, time.monotonic() - started)
    gap, at = longest_stall(began, [s.enqueued_time for r in heard.values()
                                    for s in r.statuses.values() if s.enqueued_time])
    print(f"nemesis {chaos.schedule.seed}: longest stall: {gap:.1f}s with no final status "
          f"heard, from t+{at:.1f}s", flush=True)
    return summary


def longest_stall(began: datetime, heard_at: list[datetime]) -> tuple[float, float]:
    """Return the longest wait between final statuses (from ``began``) and when it began."""
    times = sorted((t - began).total_seconds() for t in heard_at)
    gaps = [(b - a, a) for a, b in zip([0.0, *times], times, strict=False)]
    return max(gaps, default=(0.0, 0.0))


def fs_size_mb(orders: int) -> int:
    """Size of the data tmpfs: room for the run's files, little to spare."""
    return nemesis.FS_SIZE_MB + orders // 8


def _fresh(data_dir: Path) -> None:
    """Empty the data folder, unmounting what an earlier run left mounted."""
    if os.path.ismount(data_dir):
        nemesis.unmount(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)


def _keep_and_unmount(data_dir: Path) -> None:
    """Copy the data folder's files off the tmpfs, unmount it, and put them back."""
    keep = data_dir.with_name(data_dir.name + ".kept")
    shutil.rmtree(keep, ignore_errors=True)
    shutil.copytree(data_dir, keep, symlinks=True,
                    ignore=shutil.ignore_patterns("nemesis-filler"))
    nemesis.unmount(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)
    keep.rename(data_dir)


def _print_schedule(schedule: Schedule, chaos: Nemesis) -> None:
    """Print the seed's schedule and how much of it ran."""
    for line in schedule.lines():
        print(line, flush=True)
    print(f"nemesis {schedule.seed}: {len(chaos.applied)} of {len(schedule.faults)} faults "
          f"applied; rerun: python -m demo --nemesis {schedule.seed}", flush=True)


def check_seed(seed: int | None) -> None:
    """Refuse a negative seed."""
    if seed is not None and seed < 0:
        raise typer.BadParameter("must be a non-negative integer", param_hint="--nemesis")
