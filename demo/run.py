"""Run the demo: local host + simulated services + a client submitting TPC-H orders.

Prints progress while orders complete, then the unbalanced orders (if any, the first
few, each with the audit's reason) and one summary line (wrapped here)::

    summary: orders=N processed=… error=… recovered=… lost=0 duplicate_effects=0
             unbalanced=0 orders_per_s=…

It exits non-zero if any order is lost, left non-terminal, charged (or shipped) twice,
or unbalanced: its side effects in the simulator's ledger disagree with its final state
(the ledger audit, :mod:`demo.audit`).

``--chaos`` adds crashes to the faults: the host is SIGKILLed and restarted twice, the
simulator once (its ledger is a SQLite file, so it survives), and every payment request of
a few orders is black-holed with the charge performed (:func:`demo.faults.chaos_faults`).
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
from client.watch import WatchProgress, WatchResult, watch
from demo import processes
from demo.audit import Verdict, audit_data_dir
from demo.faults import black_holed_ids, chaos_faults, default_faults
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
UNBALANCED_SHOWN = 10
"""Unbalanced orders printed above the summary; the rest are counted."""


@dataclass
class Summary:
    """The demo's outcome, from the state store, the simulator's ledger and the audit."""

    orders: int
    states: Counter[ProcessState]
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
        chaos: bool = typer.Option(
            False, "--chaos",
            help="Chaos run: every payment request of a few orders black-holed with the "
                 "charge performed, 2% declined, 10% transient errors (instead of the "
                 "default faults); the host SIGKILLed at 25% and 60% and the simulator at "
                 "45% unless --kill-at / --kill-simulator-at say otherwise; settings under "
                 "which a black-holed order gives up in about 25 s.")) -> None:
    """Submit TPC-H orders to the local system with faults and report the outcome.

    Exits 1 if an order is lost, left non-terminal, has a side effect twice,
    or is unbalanced by the ledger audit (demo/audit.py).
    Unbalanced orders are printed above the summary line, with the reason.
    """
    data_dir = data_root / "demo"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    host_kills = sorted(kill_at or (CHAOS_HOST_KILLS if chaos else ()))
    simulator_kills = sorted(kill_simulator_at or (CHAOS_SIMULATOR_KILLS if chaos else ()))
    scale = max(0.01, round(orders / 1_500_000 * 1.05, 4))
    console.print(f"demo: generating TPC-H data (scale factor {scale}) ...")
    tpch_dir = tpch.generate(scale, data_root / "tpch" / f"sf-{scale}")
    batch = list(tpch.load_orders(tpch_dir, orders))
    fault_config = chaos_faults(batch) if chaos else default_faults(batch) if faults else {}
    sim, sim_url = processes.simulator(data_dir, fault_config)
    settings = {**DEMO_SETTINGS, **(CHAOS_SETTINGS if chaos else {})}
    # Admission control (MAX_IN_FLIGHT) is not one of the demo's faults: room for all.
    host = processes.host(REPO, data_dir, {**settings, "PAYMENT_API_URL": sim_url,
                                           "SHIPPING_API_URL": sim_url,
                                           "MAX_IN_FLIGHT": str(max(1000, orders))})
    if chaos:
        holes = sorted(black_holed_ids(fault_config))
        console.print(f"demo: chaos: every payment request of {', '.join(holes)} is "
                      f"black-holed (charge performed); faults in {data_dir / 'faults.json'}")
    sim.start()
    host.start()
    console.print(f"demo: local host and simulator up; logs in {data_dir}")
    reply_to = reply_queue_for(CLIENT_ID)
    started = time.monotonic()
    crashes = [(at, "host", host) for at in host_kills] + \
              [(at, "simulator", sim) for at in simulator_kills]
    try:
        sender = create_sender("local", data_dir=data_dir)
        submit_orders(sender, batch, client_id=CLIENT_ID, reply_to=reply_to)
        sender.close()
        console.print(f"demo: submitted {len(batch)} orders as client '{CLIENT_ID}'")
        result = _watch(data_dir, reply_to, len(batch), crashes, timeout_s)
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


def _watch(data_dir: Path, reply_to: str, expect: int,
           crashes: list[tuple[float, str, processes.Process]],
           timeout_s: float) -> WatchResult:
    """Watch the reply queue; SIGKILL and restart each process of ``crashes`` on time.

    ``crashes`` holds ``(fraction, name, process)``: the process is killed once that
    fraction of ``expect`` orders is terminal, in fraction order.
    """
    receiver = LocalReplyReceiver.open(data_dir, reply_to)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    due = sorted(crashes, key=lambda c: c[0])
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("orders terminal", total=expect)

            def show(p: WatchProgress) -> None:
                progress.update(task, completed=p.terminal)
                while due and p.terminal >= due[0][0] * expect:
                    _, name, proc = due.pop(0)
                    proc.kill()
                    progress.console.print(f"demo: {name} SIGKILLed at {p.terminal}/{expect}"
                                           f" orders terminal; restarting it")
                    proc.start()

            return watch(receiver, expect, timedelta(seconds=timeout_s), on_progress=show)
    finally:
        receiver.close()


def main() -> None:
    """Entry point of ``python -m demo``."""
    typer.run(run)
