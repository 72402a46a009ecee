"""Run the demo: local host + simulated services + a client submitting TPC-H orders.

Prints progress while orders complete, then the unbalanced orders (if any, the first
few, each with the audit's reason) and one summary line (wrapped here)::

    summary: orders=N processed=… error=… recovered=… lost=0 duplicate_effects=0
             unbalanced=0 orders_per_s=…

It exits non-zero if any order is lost, left non-terminal, charged (or shipped) twice,
or unbalanced: its side effects in the simulator's ledger disagree with its final state
(the ledger audit, :mod:`demo.audit`).
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from client import tpch
from client.receivers import LocalReplyReceiver
from client.submit import reply_queue_for, submit_orders
from client.watch import WatchProgress, watch
from demo import processes
from demo.audit import Verdict, audit_data_dir
from demo.faults import default_faults
from orders.messaging import create_sender
from orders.models import ProcessState
from orders.models.messages import StatusKind
from orders.stores import create_stores
from simulator.ledger import Ledger

console = Console()
REPO = Path(__file__).resolve().parents[1]
CLIENT_ID = "demo"
TERMINAL = {ProcessState.PROCESSED, ProcessState.ERROR, ProcessState.COMPENSATED,
            ProcessState.COMPENSATION_FAILED}
DEMO_SETTINGS = {
    "ORDER_DEADLINE_S": "10", "START_GRACE_S": "20", "RETRY_HOLD_BASE_S": "1",
    "MAX_FAILURES": "5", "AGENT_MAX_ATTEMPTS": "4", "AGENT_CALL_TIMEOUT_S": "2",
    "MAX_PROCESSING": "60",
    "CIRCUIT_FAILURE_THRESHOLD": "5", "CIRCUIT_COOL_DOWN_S": "2",
    "STARTER_SCHEDULE": "*/1 * * * * *", "SUPERVISOR_SCHEDULE": "*/1 * * * * *",
}
UNBALANCED_SHOWN = 10
"""Unbalanced orders printed above the summary; the rest are counted."""


@dataclass
class Summary:
    """The demo's outcome, from the state store, the simulator's ledger and the audit."""

    orders: int
    states: Counter
    recovered: int
    rejected: int
    lost: int
    non_terminal: int
    duplicate_effects: int
    orders_per_s: float
    unbalanced: list[Verdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No order lost, none left non-terminal, no side effect twice, none unbalanced."""
        return (self.lost == 0 and self.non_terminal == 0 and self.duplicate_effects == 0
                and not self.unbalanced)

    def line(self) -> str:
        """Return the one-line summary the README documents."""
        error = sum(self.states[s] for s in (ProcessState.ERROR, ProcessState.COMPENSATED,
                                             ProcessState.COMPENSATION_FAILED))
        return (f"summary: orders={self.orders} processed={self.states[ProcessState.PROCESSED]}"
                f" error={error} recovered={self.recovered} lost={self.lost}"
                f" duplicate_effects={self.duplicate_effects}"
                f" unbalanced={len(self.unbalanced)}"
                f" orders_per_s={self.orders_per_s:.1f}")

    def unbalanced_lines(self, limit: int = UNBALANCED_SHOWN) -> list[str]:
        """Return one line per unbalanced order (the first ``limit``), then how many more."""
        lines = [v.line() for v in self.unbalanced[:limit]]
        if len(self.unbalanced) > limit:
            lines.append(f"... and {len(self.unbalanced) - limit} more unbalanced orders")
        return lines


def summarize(data_dir: Path, order_ids: list[str], rejected: set[str],
              elapsed_s: float) -> Summary:
    """Count outcomes from the durable records, not from what the client heard.

    Parameters
    ----------
    data_dir : Path
        The run's folder: the local host's data and the simulator's ``ledger.sqlite``.
    order_ids : list of str
        The orders submitted.
    rejected : set of str
        Orders the client heard "Rejected" for (admission control, SPEC X3).
    elapsed_s : float
        Seconds from submission to the end of the watch.

    Returns
    -------
    Summary
        Including the ledger audit's unbalanced orders (:func:`demo.audit.audit_data_dir`).
    """
    stores = create_stores("sqlite", orders_path=data_dir / "orders.sqlite",
                           state_path=data_dir / "state.sqlite")
    try:
        records = {o: stores.states.get(o) for o in order_ids}
    finally:
        stores.close()
    present = {o: r for o, r in records.items() if r is not None}
    states = Counter(r.process_state for r in present.values())
    lost = sum(1 for o in order_ids if o not in present and o not in rejected)
    with Ledger(data_dir / "ledger.sqlite") as ledger:
        duplicates = sum(n - 1 for n in ledger.effect_counts().values() if n > 1)
    recovered = sum(1 for r in present.values()
                    if r.process_state == ProcessState.PROCESSED and r.attempt > 1)
    non_terminal = sum(1 for r in present.values() if r.process_state not in TERMINAL)
    terminal = len(present) - non_terminal + len(rejected)
    report = audit_data_dir(data_dir, data_dir / "ledger.sqlite", order_ids)
    return Summary(len(order_ids), states, recovered, len(rejected), lost, non_terminal,
                   duplicates, terminal / elapsed_s if elapsed_s > 0 else 0.0,
                   report.unbalanced)


def run(orders: int = typer.Option(1000, "--orders", min=1, help="TPC-H orders to submit."),
        data_root: Path = typer.Option(REPO / ".data", "--data-dir"),
        kill_at: float | None = typer.Option(None, "--kill-at", min=0.0, max=1.0,
                                             help="SIGKILL the host when this fraction of "
                                                  "orders is terminal, then restart it."),
        timeout_s: float = typer.Option(900.0, "--timeout-s", min=1.0),
        faults: bool = typer.Option(True, "--faults/--no-faults",
                                    help="Inject the default faults (demo/faults.py).")) -> None:
    """Submit TPC-H orders to the local system with faults and report the outcome.

    Exits 1 if an order is lost, left non-terminal, has a side effect twice,
    or is unbalanced by the ledger audit (demo/audit.py).
    Unbalanced orders are printed above the summary line, with the reason.
    """
    data_dir = data_root / "demo"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    scale = max(0.01, round(orders / 1_500_000 * 1.05, 4))
    console.print(f"demo: generating TPC-H data (scale factor {scale}) ...")
    tpch_dir = tpch.generate(scale, data_root / "tpch" / f"sf-{scale}")
    batch = list(tpch.load_orders(tpch_dir, orders))
    sim, sim_url = processes.simulator(data_dir, default_faults(batch) if faults else {})
    # Admission control (MAX_IN_FLIGHT) is not one of the demo's faults: room for all.
    host = processes.host(REPO, data_dir, {**DEMO_SETTINGS, "PAYMENT_API_URL": sim_url,
                                           "SHIPPING_API_URL": sim_url,
                                           "MAX_IN_FLIGHT": str(max(1000, orders))})
    sim.start()
    host.start()
    console.print(f"demo: local host and simulator up; logs in {data_dir}")
    reply_to = reply_queue_for(CLIENT_ID)
    started = time.monotonic()
    try:
        sender = create_sender("local", data_dir=data_dir)
        submit_orders(sender, batch, client_id=CLIENT_ID, reply_to=reply_to)
        sender.close()
        console.print(f"demo: submitted {len(batch)} orders as client '{CLIENT_ID}'")
        result = _watch(data_dir, reply_to, len(batch), host, kill_at, timeout_s)
    finally:
        host.stop()
        sim.stop()
    elapsed = time.monotonic() - started
    rejected = {o for o, s in result.statuses.items() if s.status == StatusKind.REJECTED}
    summary = summarize(data_dir, [o.order_id for o in batch], rejected, elapsed)
    for line in summary.unbalanced_lines():
        print(line, flush=True)
    print(summary.line(), flush=True)
    if not summary.ok:
        console.print("[red]demo failed: an order was lost, left non-terminal, had a side "
                      "effect twice, or is unbalanced in the ledger[/red]")
        raise typer.Exit(1)


def _watch(data_dir: Path, reply_to: str, expect: int, host: processes.Process,
           kill_at: float | None, timeout_s: float):
    receiver = LocalReplyReceiver.open(data_dir, reply_to)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    killed = False
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("orders terminal", total=expect)

            def show(p: WatchProgress) -> None:
                nonlocal killed
                progress.update(task, completed=p.terminal)
                if kill_at is not None and not killed and p.terminal >= kill_at * expect:
                    killed = True
                    host.kill()
                    progress.console.print("demo: host SIGKILLed; restarting it")
                    host.start()

            return watch(receiver, expect, timedelta(seconds=timeout_s), on_progress=show)
    finally:
        receiver.close()


def main() -> None:
    """Entry point of ``python -m demo``."""
    typer.run(run)
