"""A supervisor on SQLite stores, a ManualClock and a sender that keeps what it sent."""

from datetime import timedelta

import pytest

from orders.models import ProcessState, StateRecord
from orders.runtime import Services
from orders.settings import Settings

WINDOW_S = 3600.0


@pytest.fixture
def services(tmp_path, clock, stores, sender):
    settings = Settings(DEVHOST_DATA_DIR=str(tmp_path), MAX_FAILURES=3,
                        MAX_COMPENSATION_FAILURES=2, RETRY_HOLD_BASE_S=1.0,
                        CIRCUIT_COOL_DOWN_S=5.0, CIRCUIT_HOLD_MAX_S=60.0,
                        SUPERVISOR_SCAN_WINDOW_S=WINDOW_S, SUPERVISOR_PAGE_SIZE=10,
                        SUPERVISOR_MAX_RECORDS=100)
    return Services(settings=settings, clock=clock, stores=stores, sender=sender,
                    breakers=None, http=None, settler=None)


def running(states, clock, order_key="ORD-1", attempt=1, deadline_s=30.0, **changes):
    """Store (or re-claim) the order's record as attempt ``attempt``, Processing."""
    now = clock.now()
    record = states.get(order_key) or states.create_if_absent(
        StateRecord.new(order_key, "replies-acme", now)).record
    return states.replace(record.model_copy(update={
        "process_state": ProcessState.PROCESSING, "attempt": attempt,
        "locked_by": f"{order_key}:{attempt}", "not_before": None,
        "complete_by": now + timedelta(seconds=deadline_s), **changes}))
