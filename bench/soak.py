"""Soak: the two-client pipeline at a steady rate for a long time, sampled per window.

``python -m bench.soak --minutes 60 --rate 10`` runs the demo's pipeline without faults
(local host, simulator, two clients) while orders are offered at ``--rate`` per second,
and prints one row per ``--window-s``: orders finished, resident memory of the host's
process tree, host CPU per finished order, latency p99 of the orders that finished in
the window (submit to final status, from the local Service Bus's enqueued times) and the
size of each data file. Flat rows mean no leak and no slowdown; the task hub file should
stop growing once retention (``--retention-s``) purges as fast as orders end. The state
and order stores keep every order by design. Writes ``bench/soak.json``.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from demo import latency, processes
from demo.clients import CLIENTS, ClientBatch, submit_all, watch_all
from demo.resources import HostSampler
from demo.stage import DEMO_SETTINGS, REPO, load_stock, tpch_batches, tpch_dir
from orders.models import FINAL_STATES
from orders.stores import local_stores

OUT = Path(__file__).parent / "soak.json"


@dataclass
class Window:
    """One sampled window of the soak."""

    end_s: float
    finished: int
    rss_mib: float
    cpu_ms_per_order: float | None
    p99_ms: float | None = None
    files_mib: dict[str, float] = field(default_factory=dict)


class Submits:
    """Submit times read from the bus's duplicate history while it still holds them.

    The history keeps a submit message 10 minutes (``infra/queues.json``), so one read at
    the end of a longer run misses the earlier orders; :meth:`read` once per window.
    """

    def __init__(self, data_dir: Path, batches: Iterable[ClientBatch]) -> None:
        self._data_dir, self._ids = data_dir, latency.submit_ids(batches)
        self.times: dict[str, datetime] = {}

    def read(self) -> None:
        """Add the submit times the history holds now."""
        for key, sent in latency.read_submit_times(self._data_dir, self._ids).items():
            self.times.setdefault(key, sent)


def _finished(data_dir: Path) -> int:
    with local_stores(data_dir) as stores:
        counts = stores.states.count_by_state(FINAL_STATES)
    return sum(counts.values())


def _sizes(data_dir: Path) -> dict[str, float]:
    """MiB of each SQLite file with its write-ahead log."""
    sizes: dict[str, float] = {}
    for path in sorted(data_dir.glob("*.sqlite*")):
        name = path.name.removesuffix("-wal")
        if name.endswith(".sqlite"):
            sizes[name] = round(sizes.get(name, 0.0) + path.stat().st_size / 2**20, 1)
    return sizes


def _sample(data_dir: Path, sampler: HostSampler, window_s: float, started: float,
            stop: threading.Event, rows: list[Window], submits: Submits) -> None:
    """Append one :class:`Window` per ``window_s``, and a last one when ``stop`` is set."""
    cpu_before, done_before = 0.0, 0
    while True:
        last = stop.wait(window_s)
        if last and rows and time.monotonic() - started - rows[-1].end_s < 1.0:
            return
        sampler.sample()
        submits.read()
        done, cpu = _finished(data_dir), sampler.usage.cpu_seconds
        rss = sampler.usage.rss[-1][1] if sampler.usage.rss else 0
        per = (cpu - cpu_before) * 1000 / (done - done_before) if done > done_before else None
        rows.append(Window(round(time.monotonic() - started, 1), done, round(rss / 2**20, 1),
                           None if per is None else round(per, 1), files_mib=_sizes(data_dir)))
        typer.echo(f"soak: {rows[-1].end_s:.0f} s: {done} finished, {rows[-1].rss_mib} MiB")
        cpu_before, done_before = cpu, done
        if last:
            return


def _p99_by_window(rows: list[Window], submitted: dict[str, datetime],
                   finished: dict[str, datetime], started_at: datetime) -> None:
    """Fill each row's p99 from the orders whose final status fell in its window.

    ``started_at``: the wall-clock time (the bus's clock) at which ``end_s`` counts 0.
    """
    bounds = [0.0] + [r.end_s for r in rows]
    for row, low, high in zip(rows, bounds[:-1], bounds[1:], strict=True):
        inside = {k: t for k, t in finished.items()
                  if low <= (t - started_at).total_seconds() < high}
        values = latency.latencies_ms(submitted, inside)
        row.p99_ms = round(latency.percentile(values, 99), 1) if values else None


def _print(rows: list[Window]) -> None:
    table = Table("end s", "finished", "RSS MiB", "CPU ms/order", "p99 ms", "files MiB")
    for r in rows:
        table.add_row(f"{r.end_s:.0f}", str(r.finished), f"{r.rss_mib:.0f}",
                      "-" if r.cpu_ms_per_order is None else f"{r.cpu_ms_per_order:.1f}",
                      "-" if r.p99_ms is None else f"{r.p99_ms:.0f}",
                      " ".join(f"{k.removesuffix('.sqlite')}={v:g}"
                               for k, v in r.files_mib.items()))
    Console(width=200).print(table)


def main(minutes: float = typer.Option(60.0, "--minutes", min=0.5),
         rate: float = typer.Option(10.0, "--rate", min=0.1),
         window_s: float = typer.Option(300.0, "--window-s", min=5.0, max=540.0,
                                   help="under the submit queues' 10-minute history"),
         retention_s: float = typer.Option(600.0, "--retention-s", min=60.0),
         data_root: Path = typer.Option(REPO / ".data", "--data-dir")) -> None:
    """Run the soak and print one row per window; exit 1 if an order was not finished."""
    orders = int(minutes * 60 * rate)
    data_dir = data_root / "soak"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    batches = tpch_batches(orders, data_root)
    load_stock(data_dir, tpch_dir(orders, data_root), batches, ample=True)
    sim, sim_url = processes.simulator(data_dir, {}, retention_days=retention_s / 86400)
    room = str(max(1000, int(rate * 120)))
    host = processes.host(REPO, data_dir, {
        **DEMO_SETTINGS, **processes.service_urls(sim_url),
        "MAX_IN_FLIGHT": str(int(room) * len(CLIENTS)), "MAX_IN_FLIGHT_PER_CLIENT": room,
        "RETENTION_DAYS": f"{retention_s / 86400:.6f}", "RETENTION_SCHEDULE": "0 * * * * *"})
    sim.start()
    host.start()
    sampler = HostSampler(lambda: host.proc.pid if host.proc and host.proc.poll() is None
                          else None, interval_s=5.0).start()
    rows: list[Window] = []
    stop, submits = threading.Event(), Submits(data_dir, batches)
    started, started_at = time.monotonic(), datetime.now(UTC)
    watcher = threading.Thread(target=_sample, daemon=True,
                               args=(data_dir, sampler, window_s, started, stop, rows, submits))
    watcher.start()
    submitter = threading.Thread(target=submit_all, args=(data_dir, batches),
                                 kwargs={"rate": rate}, daemon=True)
    try:
        submitter.start()
        heard = watch_all(data_dir, batches, timedelta(minutes=minutes + 15), lambda _: None)
        submitter.join()
    finally:
        stop.set()
        watcher.join()
        sampler.stop()
        host.stop()
        sim.stop()
    finished = latency.terminal_times(batches, heard)
    _p99_by_window(rows, submits.times, finished, started_at)
    OUT.write_text(json.dumps({"minutes": minutes, "rate": rate, "orders": orders,
                               "finished": len(finished),
                               "windows": [asdict(r) for r in rows]}, indent=2))
    _print(rows)
    typer.echo(f"soak: {len(finished)} of {orders} orders finished; rows in {OUT}")
    if len(finished) < orders:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
