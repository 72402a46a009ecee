"""Fixtures of the Durable HTTP API tests: every test runs against both paths of a request.

``api_path`` "http": a real uvicorn server; "in_process": the same app's handlers answer
in this process (:mod:`devhost.http_api.in_process`), as the host answers its own durable
clients. The ``http`` client and the SDK client of ``server.client()`` both take that path.
A module about HTTP itself overrides ``api_path`` with "http" alone.
"""

from datetime import UTC, datetime

import httpx
import pytest

from clocks import ManualClock
from devhost.http_api import in_process
from devhost.taskhub.store import TaskHub
from tests.devhost.http_api.helpers import InProcessTransport

T0 = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def taskhub(tmp_path, clock):
    # NORMAL: these tests are about HTTP, not power-loss durability; fewer fsyncs.
    return TaskHub(tmp_path / "taskhub.sqlite", clock, name="LocalHub", synchronous="NORMAL")


@pytest.fixture(params=["http", "in_process"])
def api_path(request):
    """How requests reach the API: over HTTP, or answered in this process."""
    return request.param


@pytest.fixture
def _mounted(api_path):
    """Register what a test mounts for in-process answers (in_process), undone after it."""
    registered = []

    def use(server):
        if api_path == "in_process":
            in_process.register(server.in_process_api)
            registered.append(server.in_process_api)
        return server

    yield use
    for api in registered:
        in_process.unregister(api)


@pytest.fixture
def server(listener, taskhub, clock, _mounted):
    """The HTTP app on a fresh task hub, served by the session's uvicorn server."""
    return _mounted(listener.mount(taskhub, clock))


@pytest.fixture
def make_server(listener, taskhub, clock, _mounted):
    """Mount the app with extra create_http_app arguments (or an on_start hook)."""
    def make(**kwargs):
        return _mounted(listener.mount(taskhub, clock, **kwargs))
    return make


@pytest.fixture(scope="session")
def _http_session():
    """One HTTP client for the session (creating a client per request costs ~30 ms)."""
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture
def http(api_path, _http_session, listener):
    """The test's client: the session's over HTTP, else one answered in this process."""
    if api_path == "http":
        yield _http_session
        return
    transport = InProcessTransport(lambda: listener.mounted_api)
    with httpx.Client(transport=transport, timeout=30) as client:
        yield client
