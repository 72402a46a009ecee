"""One overview call reads the same from the state store at 100 and at 5,000 records (X8).

The store is wrapped to count each call and the rows it answered, and SQLite's own trace
gives every statement the call ran, whose query plans must search an index, never scan
the table. The cost figures themselves are ``python -m bench.dashboard_overview``'s.
"""

from dataclasses import replace
from pathlib import Path

import pytest

from bench.dashboard_overview import NOW, CountingStates, record, seed_states, services_on
from clocks import ManualClock
from ops.dashboard.overview import build_overview
from ops.dashboard.series import CHANGES_READ


def overview_reads(folder: Path, count: int) -> tuple[dict, dict, list[str], dict]:
    """Seed ``count`` records, run one overview; return its calls, rows, SQL and answer."""
    folder.mkdir()
    svc = services_on(folder, ManualClock(NOW))
    stores = svc.stores
    try:
        seed_states(stores.states, count, recent=40)
        build_overview(svc, 5)  # the first call saves the summary snapshot the next reads
        counting = CountingStates(stores.states)
        svc.stores = replace(stores, states=counting)
        statements: list[str] = []
        conn = stores.states._db.conn
        conn.set_trace_callback(statements.append)
        try:
            answer = build_overview(svc, 5)
        finally:
            conn.set_trace_callback(None)
        plans = {sql: [row["detail"] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
                 for sql in statements if sql.lstrip().upper().startswith("SELECT")}
    finally:
        stores.close()
    return dict(counting.calls), dict(counting.rows), plans, answer


@pytest.fixture(scope="module")
def small_and_large(tmp_path_factory):
    base = tmp_path_factory.mktemp("cost")
    return overview_reads(base / "small", 100), overview_reads(base / "large", 5_000)


def test_the_overview_makes_the_same_store_calls_for_the_same_rows_at_any_size(
        small_and_large):
    (calls, rows, _, small), (calls_large, rows_large, _, large) = small_and_large
    assert calls == calls_large == {"load_snapshot": 1, "count_by_state": 1, "scan_expired": 2,
                                    "find_recent": 3, "changes_since": 1}
    assert rows == rows_large
    assert rows["changes_since"] == 40 < CHANGES_READ  # the last hour's changes only
    assert rows["find_recent"] == 3 * 6  # limit 5, and one more to tell there are more
    assert large["summary"]["total"] == 5_000 and small["summary"]["total"] == 100
    assert large["compensations"]["Compensated"]["more"] is True
    assert len(large["compensations"]["Compensated"]["orders"]) == 5


def test_no_statement_of_the_overview_scans_the_state_table(small_and_large):
    _, (_, _, plans, _) = small_and_large
    assert len(plans) >= 7
    for sql, plan in plans.items():
        assert all(" USING " in step and not step.startswith("SCAN") for step in plan), (
            sql, plan)


def test_a_snapshot_past_its_age_is_rebuilt_from_the_store(tmp_path):
    from datetime import timedelta

    from ops.summary import SNAPSHOT, SNAPSHOT_MAX_AGE

    clock = ManualClock(NOW)
    svc = services_on(tmp_path, clock)
    try:
        seed_states(svc.stores.states, 10, recent=0)
        assert build_overview(svc, 5)["summary"]["total"] == 10
        for n in range(10, 13):
            svc.stores.states.create_if_absent(record(n, NOW, 0))
        assert build_overview(svc, 5)["summary"]["total"] == 10  # the snapshot's figures
        clock.advance(SNAPSHOT_MAX_AGE + timedelta(seconds=1))
        assert build_overview(svc, 5)["summary"]["total"] == 13
        assert svc.stores.states.load_snapshot(SNAPSHOT)["total"] == 13
    finally:
        svc.stores.close()
