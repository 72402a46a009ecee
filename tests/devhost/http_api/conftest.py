from datetime import UTC, datetime

import httpx
import pytest

from clocks import ManualClock
from devhost.taskhub.store import TaskHub

T0 = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def taskhub(tmp_path, clock):
    # NORMAL: these tests are about HTTP, not power-loss durability; fewer fsyncs.
    return TaskHub(tmp_path / "taskhub.sqlite", clock, name="LocalHub", synchronous="NORMAL")


@pytest.fixture
def server(listener, taskhub, clock):
    """The HTTP app on a fresh task hub, served by the session's uvicorn server."""
    return listener.mount(taskhub, clock)


@pytest.fixture
def make_server(listener, taskhub, clock):
    """Mount the app with extra create_http_app arguments (or an on_start hook)."""
    def make(**kwargs):
        return listener.mount(taskhub, clock, **kwargs)
    return make


@pytest.fixture(scope="session")
def http():
    """One HTTP client for the session (creating a client per request costs ~30 ms)."""
    with httpx.Client(timeout=30) as client:
        yield client
