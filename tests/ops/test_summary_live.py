"""The dashboard's figures agree with its tables at the same moment (X8, docs/operations.md).

The summary snapshot (saved at most ``SNAPSHOT_MAX_AGE`` before) served every figure before:
during a chaos run the top panel read ``stuck 0`` above a table of stuck orders.
"""

from datetime import timedelta

from bench.dashboard_overview import NOW, record, seed_states, services_on
from clocks import ManualClock
from ops.dashboard.overview import build_overview
from ops.summary import SNAPSHOT
from orders.models import ProcessState


def test_stuck_and_in_flight_figures_match_the_lists_read_in_the_same_call(tmp_path):
    clock = ManualClock(NOW)
    svc = services_on(tmp_path, clock)
    try:
        seed_states(svc.stores.states, 20, recent=0)
        first = build_overview(svc, 5)["summary"]
        assert first["stuck"] == 0
        clock.advance(timedelta(seconds=30))  # the snapshot stays in use
        for n in range(100, 104):
            svc.stores.states.create_if_absent(record(n, clock.now(), 0).model_copy(update={
                "process_state": ProcessState.PROCESSING,
                "complete_by": clock.now() - timedelta(seconds=5), "locked_by": f"inst-{n}"}))
        overview = build_overview(svc, 5)
        summary = overview["summary"]
        assert len(overview["attention"]["stuck"]["orders"]) == 4
        assert summary["stuck"] == 4
        assert summary["counts"]["Processing"] == 4
        assert summary["inFlight"] == first["inFlight"] + 4
        assert summary["total"] == first["total"] + 4
        assert summary["finalCountsAt"] == first["at"] != summary["at"]
        assert svc.stores.states.load_snapshot(SNAPSHOT)["stuck"] == 0  # not rewritten
    finally:
        svc.stores.close()
