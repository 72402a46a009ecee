"""What one dashboard overview call costs at 1,000 and at 60,000+ state records (SQLite).

``python -m bench.dashboard_overview [--counts 1000 60000 250000] [--calls 20]``: for each
count, a fresh SQLite state store is seeded in one untimed bulk insert (:func:`seed_states`:
a fixed number of records changed in the last hour, the rest older, across the terminal
states and Pending), then :func:`ops.dashboard.overview.build_overview` runs ``--calls``
times with the store reads counted; it prints the median and the slowest call in ms, the
mean time of the counts by state (the one read that grows with the store), and the store
calls and rows read per call. Figures: docs/operations.md, "Dashboard".
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from clocks import ManualClock
from ops.dashboard.overview import build_overview
from orders.circuit import BreakerRegistry
from orders.models import ProcessState, StateRecord
from orders.runtime import Services
from orders.settings import Settings
from orders.stores import local_stores
from orders.stores._sqlite_state_table import COLUMNS, to_row
from sqlitekit import write

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
RECENT = 300
"""Records changed in the last hour, whatever the count (the rest are older)."""
STATES = (ProcessState.PROCESSED,) * 6 + (
    ProcessState.ERROR, ProcessState.COMPENSATED, ProcessState.COMPENSATION_FAILED,
    ProcessState.PENDING)


def record(n: int, now: datetime, recent: int) -> StateRecord:
    """The ``n``-th seeded record: the first ``recent`` changed in the last hour."""
    ago = timedelta(minutes=55 * n / recent) if n < recent else timedelta(hours=2, minutes=n)
    return StateRecord(order_key=f"seed~ORD-{n:07d}", reply_to="replies-seed",
                       process_state=STATES[n % len(STATES)], etag=f"e{n}",
                       created_at=now - ago - timedelta(minutes=3), updated_at=now - ago,
                       client_id="seed", client_order_id=f"ORD-{n:07d}")


def seed_states(states: Any, count: int, now: datetime = NOW, recent: int = RECENT) -> None:
    """Insert ``count`` records into a SQLite state store in one transaction (untimed)."""
    rows = [to_row(record(n, now, min(recent, count))) for n in range(count)]
    with states._db.use() as conn, write(conn):
        conn.executemany(f"INSERT INTO state_records ({', '.join(COLUMNS)}) "
                         f"VALUES ({', '.join(':' + c for c in COLUMNS)})", rows)


def rows_of(answer: Any) -> int:
    """Rows a store call answered: a page's records, a list's items; a count is one row."""
    if hasattr(answer, "records"):
        return len(answer.records)
    if isinstance(answer, list):
        return len(answer)
    return 1 if isinstance(answer, dict | int) else 0


class CountingStates:
    """A state store wrapper that counts each call and the rows it answered."""

    def __init__(self, states: Any) -> None:
        self.states, self.calls, self.rows = states, Counter[str](), Counter[str]()
        self.seconds: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.states, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            answer = method(*args, **kwargs)
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - began
            self.calls[name] += 1
            self.rows[name] += rows_of(answer)
            return answer
        return counted


def services_on(folder: Path, clock: ManualClock) -> Services:
    """Services over SQLite stores in ``folder`` (no queues: the overview notes their absence)."""
    stores = local_stores(folder, clock)
    return Services(settings=Settings(DEVHOST_DATA_DIR=str(folder)), clock=clock,
                    stores=stores, sender=None, breakers=BreakerRegistry(clock=clock),  # type: ignore[arg-type]
                    http=None, settler=None)  # type: ignore[arg-type]


def measure(count: int, calls: int) -> dict[str, Any]:
    """Seed ``count`` records, run the overview ``calls`` times; return the figures."""
    with tempfile.TemporaryDirectory() as folder:
        svc = services_on(Path(folder), ManualClock(NOW))
        stores = svc.stores
        try:
            seed_states(stores.states, count)
            counting = CountingStates(stores.states)
            svc.stores = replace(stores, states=counting)
            times = []
            for _ in range(calls):
                began = time.perf_counter()
                build_overview(svc, 50)
                times.append((time.perf_counter() - began) * 1000)
        finally:
            stores.close()
    return {"records": count, "median_ms": round(statistics.median(times), 1),
            "max_ms": round(max(times), 1),
            "counts_ms": round(counting.seconds["count_by_state"] * 1000 / calls, 1),
            "store_calls": sum(counting.calls.values()) // calls,
            "rows_read": sum(counting.rows.values()) // calls}


def main() -> None:
    """Run the measurement for each ``--counts`` and print one line per count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1_000, 60_000, 250_000])
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the overview's note that there are no queues here
    for count in args.counts:
        figures = measure(count, args.calls)
        print("  ".join(f"{k}={v}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
