"""Fixtures shared across the suite: a ManualClock, embedded stores, a recording sender.

Test folders mirror the packages they test; what several of them need lives here and in
:mod:`tests.support`.
"""

import os
import warnings
from contextlib import contextmanager

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.test.globals_test import reset_trace_globals

import sqlitekit

# Most tests' orders name SKUs of no catalogue; the tests of prices turn it on
# (orders/pricing.py). Set before any app loads: local.settings.json's Values never
# override a set variable.
os.environ.setdefault("PRICE_FROM_CATALOGUE", "false")
from clocks import ManualClock
from orders.observability import metrics, telemetry
from orders.runtime import Services
from orders.settings import Settings
from orders.stores import _sqlite as sqlite_adapters
from orders.stores import create_stores
from tests.support.fakes import RecordingSender

WORKERS_PER_CPU = 2
"""The suite mostly waits (subprocesses, sockets, timers): two xdist workers per CPU."""
SLOW_DEFAULT_S = 5.0
"""Expected seconds of a ``slow`` test that names none (``pytest.mark.slow(expected_s=...)``)."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for ``-n logical``/``-n auto`` (addopts): ``WORKERS_PER_CPU`` per CPU."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return WORKERS_PER_CPU * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    """Hide urllib3's warning for the local Cosmos DB server's requests, in every thread.

    The server's certificate is self-signed and the test client skips verification on
    purpose. azure-cosmos also sends health checks from its own thread pool after a test has
    ended, outside any test's warning filters, so the filter is the process's own, set before
    collection (pytest restores the filters it finds around each test). Requests to any
    other host still warn.
    """
    from urllib3.exceptions import InsecureRequestWarning

    local = r"Unverified HTTPS request is being made to host '127\.0\.0\.1'"
    warnings.filterwarnings("ignore", message=local, category=InsecureRequestWarning)


def expected_s(item: pytest.Item) -> float:
    """The seconds ``item`` is expected to take: 0 unless it is marked ``slow``."""
    mark = item.get_closest_marker("slow")
    return 0.0 if mark is None else float(mark.kwargs.get("expected_s", SLOW_DEFAULT_S))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the longest tests first, so no long test starts when the others are done.

    xdist hands work out in this order; a stable sort keeps the rest as collected (every
    worker sorts the same collection alike, as xdist requires).
    """
    items.sort(key=lambda item: -expected_s(item))


@contextmanager
def _environment_kept():
    """Put ``os.environ`` back as it was on entry, whatever the body set or removed."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        if os.environ != saved:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture(autouse=True, scope="module")
def module_environment_as_it_was():
    """Give every module the process environment the module before it started with.

    A module-scoped fixture that loads an app (or sets a setting) runs before any test's
    own snapshot below, so without this its ``local.settings.json`` Values (the repository's
    ``ORDER_CLIENTS`` "me", say) stayed in ``os.environ`` for every later module of the worker.
    """
    with _environment_kept():
        yield


@pytest.fixture(autouse=True)
def environment_as_it_was():
    """Give every test the process environment it started with.

    Loading an app puts its ``local.settings.json`` Values into ``os.environ`` (only where
    unset, as the Functions host does), and some tests set a setting directly; without
    this a later test in the same worker would read them, and an app setting the test
    wrote into a host's settings file would lose to the leaked one.
    """
    with _environment_kept():
        yield


@pytest.fixture(autouse=True)
def no_tracer_left_behind(monkeypatch):
    """Give every test the process's tracing as a fresh process has it: none installed.

    A test that builds services with a data folder installs the global tracer provider of
    the local trace store (:func:`orders.observability.telemetry.configure_tracing`); that
    provider is process-wide, so without this a later test would run traced or not
    depending on the order the suite runs in.
    """
    monkeypatch.setattr(telemetry, "_local_traces", None)
    reset_trace_globals()
    yield
    installed = trace.get_tracer_provider()
    if hasattr(installed, "shutdown"):
        installed.shutdown()
    reset_trace_globals()


_connect = sqlitekit.connect


def _connect_without_fsync(path, *, synchronous="FULL"):
    return _connect(path, synchronous="NORMAL" if synchronous == "FULL" else synchronous)


@pytest.fixture(autouse=True)
def sqlite_without_fsync(request, monkeypatch):
    """Open this process's SQLite files with ``synchronous=NORMAL`` unless marked ``fsync``.

    FULL fsyncs the WAL on every commit (about 8 ms each on a shared disk, most of the
    suite's time). In WAL mode NORMAL loses commits only on a power loss, never on a
    process kill, and no test can cut the power: every assertion holds as under FULL.
    Subprocesses (the demo, the crash tests) keep the product's FULL.
    """
    if request.node.get_closest_marker("fsync") is None:
        for module in (sqlitekit, sqlite_adapters):
            monkeypatch.setattr(module, "connect", _connect_without_fsync)


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


@pytest.fixture
def make_system(tmp_path, monkeypatch):
    """The e2e harness's System (function app under the local host + simulator)."""
    from tests.e2e.harness import System

    systems = []

    def factory(**kwargs):
        system = System(tmp_path, ManualClock(), monkeypatch, **kwargs)
        systems.append(system)
        return system

    yield factory
    for s in systems:
        s.close()


@pytest.fixture(scope="session")
def listener():
    """One real uvicorn server for the session, serving the Durable HTTP API a test mounts."""
    from tests.devhost.http_api.helpers import Listener

    srv = Listener()
    yield srv
    srv.stop()


class Readings:
    """Metric points of a test's own meter provider, by name and attributes."""

    def __init__(self, reader: InMemoryMetricReader) -> None:
        self.reader = reader

    def points(self) -> dict[str, dict[tuple, float]]:
        data = self.reader.get_metrics_data()
        result: dict[str, dict[tuple, float]] = {}
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    for point in metric.data.data_points:
                        key = tuple(sorted(point.attributes.items()))
                        value = getattr(point, "value", None)
                        if value is None:  # histogram
                            value = (point.count, point.sum)
                        result.setdefault(metric.name, {})[key] = value
        return result


@pytest.fixture
def readings():
    reader = InMemoryMetricReader()
    metrics.install(MeterProvider(metric_readers=[reader]))
    yield Readings(reader)
    metrics.install(None)
