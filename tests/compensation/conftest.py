import pytest

from clocks import ManualClock
from orders.messaging import OutgoingMessage
from orders.runtime import Services
from orders.settings import Settings
from orders.stores import create_stores


class RecordingSender:
    """A MessageSender that keeps what was sent, per queue (a fake of the messaging port)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, OutgoingMessage]] = []

    def send(self, queue: str, message: OutgoingMessage) -> None:
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
                        START_GRACE_S=60.0, COMPENSATION_DEADLINE_S=20.0, AGENT_MAX_ATTEMPTS=3,
                        STARTER_BATCH=10)
    return Services(settings=settings, clock=clock, stores=stores, sender=sender,
                    breakers=None, http=None, settler=None)
