"""The demo's outcome: one summary line for the run, and one per client (docs/demo.md).

Counted from the durable records and the audit (:mod:`demo.audit`), never from what a
client heard, except its ``heard`` and ``foreign`` counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from client.watch import WatchResult
from demo.audit import AuditReport, Verdict, audit_data_dir
from demo.latency import Latency
from orders.models import ProcessState, StateRecord
from orders.stores import local_stores
from simulator.ledger import Ledger

TERMINAL = {ProcessState.PROCESSED, ProcessState.ERROR, ProcessState.COMPENSATED,
            ProcessState.COMPENSATION_FAILED}
UNBALANCED_SHOWN = 10


@dataclass
class Summary:
    """The outcome of a set of orders, from the state store, the ledger and the audit."""

    orders: int
    states: Counter[ProcessState]
    recovered: int
    rejected: int
    lost: int
    non_terminal: int
    duplicate_effects: int
    orders_per_s: float
    unbalanced: list[Verdict] = field(default_factory=list)
    latency: Latency | None = None
    stock_unbalanced: tuple[str, ...] = ()
    out_of_stock: int = 0

    @property
    def ok(self) -> bool:
        """No order lost, none non-terminal, no side effect twice, none unbalanced, stock too."""
        return (self.lost == 0 and self.non_terminal == 0 and self.duplicate_effects == 0
                and not self.unbalanced and not self.stock_unbalanced)

    def counts(self) -> str:
        """``orders=… processed=… error=… recovered=… lost=… duplicate_effects=… unbalanced=…``."""
        error = sum(self.states[s] for s in (ProcessState.ERROR, ProcessState.COMPENSATED,
                                             ProcessState.COMPENSATION_FAILED))
        return (f"orders={self.orders} processed={self.states[ProcessState.PROCESSED]}"
                f" error={error} recovered={self.recovered} lost={self.lost}"
                f" duplicate_effects={self.duplicate_effects}"
                f" unbalanced={len(self.unbalanced)}")

    def line(self) -> str:
        """Return the one-line summary of the whole run that the README documents."""
        lat = self.latency
        p50, p99 = (f"{lat.p50_ms:.0f}", f"{lat.p99_ms:.0f}") if lat else ("n/a", "n/a")
        return (f"summary: {self.counts()} stock_unbalanced={len(self.stock_unbalanced)}"
                f" out_of_stock={self.out_of_stock} orders_per_s={self.orders_per_s:.1f}"
                f" p50_ms={p50} p99_ms={p99}")

    def client_line(self, client_id: str, heard: WatchResult | None,
                    own_order_ids: Collection[str]) -> str:
        """Return ``client <id>: <counts> heard=… foreign=…`` for one client's orders."""
        statuses = heard.statuses if heard is not None else {}
        terminal = sum(1 for s in statuses.values() if s.terminal)
        foreign = sum(1 for order_id in statuses if order_id not in own_order_ids)
        return f"client {client_id}: {self.counts()} heard={terminal} foreign={foreign}"

    def unbalanced_lines(self, limit: int = UNBALANCED_SHOWN) -> list[str]:
        """Return one line per unbalanced order and SKU (the first ``limit`` of each)."""
        lines = [v.line() for v in self.unbalanced[:limit]] + list(self.stock_unbalanced[:limit])
        if len(self.stock_unbalanced) > limit:
            lines.append(f"... and {len(self.stock_unbalanced) - limit} more unbalanced SKUs")
        if len(self.unbalanced) > limit:
            lines.append(f"... and {len(self.unbalanced) - limit} more unbalanced orders")
        return lines


@dataclass(frozen=True)
class Records:
    """What the durable records say about the run's orders, read once, by order key."""

    states: dict[str, StateRecord | None]
    effect_counts: dict[tuple[str, str, str], int]
    report: AuditReport


def read_records(data_dir: Path, keys: list[str]) -> Records:
    """Read the state records, the ledger's counts and the audit of ``keys``."""
    with local_stores(data_dir) as stores:
        states = {k: stores.states.get(k) for k in keys}
    with Ledger(data_dir / "ledger.sqlite") as ledger:
        counts = ledger.effect_counts()
    return Records(states, counts, audit_data_dir(data_dir, data_dir / "ledger.sqlite", keys))


def summarize(records: Records, keys: Collection[str], rejected: set[str],
              elapsed_s: float, *, whole_run: bool = True) -> Summary:
    """Count the outcome of the orders ``keys`` (all of the run's, or one client's).

    ``whole_run`` also counts duplicates and unbalanced verdicts of orders nobody submitted.
    """
    everything = whole_run
    present = {k: r for k in keys if (r := records.states.get(k)) is not None}
    states = Counter(r.process_state for r in present.values())
    lost = sum(1 for k in keys if k not in present and k not in rejected)
    duplicates = sum(n - 1 for (_, _, key), n in records.effect_counts.items()
                     if n > 1 and (everything or key in keys))
    recovered = sum(1 for r in present.values()
                    if r.process_state == ProcessState.PROCESSED and r.attempt > 1)
    non_terminal = sum(1 for r in present.values() if r.process_state not in TERMINAL)
    terminal = len(present) - non_terminal + len(rejected & set(keys))
    unbalanced = [v for v in records.report.unbalanced if everything or v.order_key in keys]
    report = records.report
    return Summary(len(keys), states, recovered, len(rejected & set(keys)), lost,
                   non_terminal, duplicates, terminal / elapsed_s if elapsed_s > 0 else 0.0,
                   unbalanced, stock_unbalanced=report.stock_unbalanced if everything else (),
                   out_of_stock=report.out_of_stock if everything else 0)
