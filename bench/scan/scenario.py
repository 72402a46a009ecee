"""Seed a state store with N records (1 % expired) and time supervisor scans over it.

The layout per 100 records, by index: 1 expired (Processing, every fifth Compensating,
CompleteBy 1..30 minutes ago), 19 Processing not yet due, 10 Pending, 2 Error, 68
Processed with a CompleteBy inside the window (so only the state filter excludes them).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from orders.models import ProcessState, StateRecord
from orders.stores import StateStore, iter_expired_pages

WINDOW = timedelta(hours=1)


def record(i: int, now: datetime) -> StateRecord:
    slot = i % 100
    order_key = f"BENCH-{i:07d}"
    state, complete_by = ProcessState.PROCESSED, now - timedelta(minutes=2)
    if slot == 0:
        state = ProcessState.COMPENSATING if (i // 100) % 5 == 0 else ProcessState.PROCESSING
        complete_by = now - timedelta(minutes=1 + (i // 100) % 30)
    elif slot < 20:
        state, complete_by = ProcessState.PROCESSING, now + timedelta(minutes=5)
    elif slot < 30:
        state, complete_by = ProcessState.PENDING, None
    elif slot < 32:
        state = ProcessState.ERROR
    locked = state in (ProcessState.PROCESSING, ProcessState.COMPENSATING)
    return StateRecord(
        order_key=order_key,
        reply_to="bench-replies",
        process_state=state,
        locked_by=f"{order_key}:1" if locked else None,
        attempt=1 if locked else 0,
        complete_by=complete_by,
        created_at=now - timedelta(hours=2),
        updated_at=now - timedelta(hours=2),
    )


def expected_expired(n: int) -> int:
    return len(range(0, n, 100))


def seed(store: StateStore, n: int, now: datetime, *, workers: int = 1) -> float:
    """Create ``n`` records; return the seconds it took."""
    started = time.perf_counter()

    def create(i: int) -> None:
        store.create_if_absent(record(i, now))

    if workers == 1:
        for i in range(n):
            create(i)
    else:
        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(create, range(n), chunksize=256):
                pass
    return time.perf_counter() - started


@dataclass
class ScanResult:
    pages: int
    found: int
    rows_read: int | None
    request_charge: float | None
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)


def scan(store: StateStore, now: datetime, page_size: int, repeats: int) -> ScanResult:
    """Run ``repeats`` full scans; check each finds every expired record exactly once."""
    times: list[float] = []
    result = None
    for _ in range(repeats):
        started = time.perf_counter()
        pages = list(iter_expired_pages(store, now, WINDOW, page_size))
        times.append((time.perf_counter() - started) * 1000)
        ids = [r.order_key for page in pages for r in page.records]
        if len(ids) != len(set(ids)):
            raise AssertionError("a record was returned twice")
        result = ScanResult(
            pages=len(pages),
            found=len(ids),
            rows_read=_total(p.rows_read for p in pages),
            request_charge=_total(p.request_charge for p in pages),
            times_ms=times,
        )
    assert result is not None
    return result


def _total(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000
