"""Fixtures of the ops tests."""

from datetime import UTC, datetime

import pytest

from clocks import ManualClock
from orders.circuit import BreakerRegistry
from orders.messaging.factory import create_messaging
from orders.runtime import Services
from orders.settings import Settings
from orders.stores.factory import local_stores


@pytest.fixture
def local_queue_services(tmp_path):
    """Services over real SQLite stores and the local queues, with a queue browser."""
    clock = ManualClock(datetime(2030, 1, 1, tzinfo=UTC))
    messaging = create_messaging("local", data_dir=tmp_path, clock=clock)
    svc = Services(settings=Settings(DEVHOST_DATA_DIR=str(tmp_path),
                                     ORDER_CLIENTS="shop-a,shop-b"),
                   clock=clock, stores=local_stores(tmp_path, clock), sender=messaging.sender,
                   breakers=BreakerRegistry(clock=clock), http=None,  # type: ignore[arg-type]
                   settler=messaging.settler, depths=messaging.depths)
    yield svc
    svc.stores.close()
    messaging.sender.close()
    messaging.depths.close()
