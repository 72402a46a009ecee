"""A supervisor on SQLite stores, a ManualClock and a sender that keeps what it sent."""

from datetime import timedelta

import pytest

from clocks import ManualClock
from orders.models import ProcessState, StateRecord
from orders.runtime import Services
from orders.settings import Settings
from orders.stores import create_stores

WINDOW_S = 3600.0


class RecordingSender:
    """A MessageSender that keeps what was sent, per queue (a fake of the messaging port)."""

    def __init__(self) -> None:
        self.sent = []

    def send(self, queue, message) -> None:
        self.sent.append((queue, message))

    def send_many(self, queue, messages) -> None:
        for message in messages:
            self.send(queue, message)

    def close(self) -> None:
        pass

    def bodies(self, queue: str) -> list[dict]:
        return [m.body for q, m in self.sent if q == queue]


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def stores(tmp_path, clock):
    stores = create_stores("sqlite", orders_path=tmp_path / "orders.sqlite",
                           state_path=tmp_path / "state.sqlite", clock=clock)
    yield stores
    stores.close()


@pytest.fixture
def sender():
    return RecordingSender()


@pytest.fixture
def services(tmp_path, clock, stores, sender):
    settings = Settings(DEVHOST_DATA_DIR=str(tmp_path), MAX_FAILURES=3,
                        MAX_COMPENSATION_FAILURES=2, RETRY_HOLD_BASE_S=1.0,
                        CIRCUIT_COOL_DOWN_S=5.0, CIRCUIT_HOLD_MAX_S=60.0,
                        SUPERVISOR_SCAN_WINDOW_S=WINDOW_S, SUPERVISOR_PAGE_SIZE=10,
                        SUPERVISOR_MAX_RECORDS=100)
    return Services(settings=settings, clock=clock, stores=stores, sender=sender,
                    breakers=None, http=None, settler=None)


def running(states, clock, order_id="ORD-1", attempt=1, deadline_s=30.0, **changes):
    """Store (or re-claim) the order's record as attempt ``attempt``, Processing."""
    now = clock.now()
    record = states.get(order_id) or states.create_if_absent(
        StateRecord.new(order_id, "replies-acme", now)).record
    return states.replace(record.model_copy(update={
        "process_state": ProcessState.PROCESSING, "attempt": attempt,
        "locked_by": f"{order_id}:{attempt}", "not_before": None,
        "complete_by": now + timedelta(seconds=deadline_s), **changes}))
