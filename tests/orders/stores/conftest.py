"""Fixtures of the store contract suite: one set of tests, run against every backend.

``backend`` is parametrized over "sqlite" and "cosmos"; the Cosmos half is marked
``cosmos`` so ``pytest -m cosmos`` runs it alone and ``-m "not cosmos"`` skips it. The
Cosmos half talks to ``@vercel/cosmosdb-server`` (installed by ``npm ci``), started once
per session on 127.0.0.1 with a fresh database; each test gets its own containers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clocks import ManualClock
from orders.stores import Stores, create_stores
from orders.stores._cosmos import open_client, open_database
from tests.support.cosmos_server import EMULATOR_KEY, LocalCosmosServer, LocalCosmosUnavailable

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The local server's certificate is self-signed and the test client skips verification
    # on purpose. The suite's own filter (tests/conftest.py) covers the client's threads
    # after a test; this mark wins over a command line's -W error inside the tests.
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(
                pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
            )


@pytest.fixture(scope="session")
def cosmos_endpoint() -> Iterator[str]:
    try:
        server = LocalCosmosServer(ROOT)
        server.start()
    except LocalCosmosUnavailable as exc:
        pytest.fail(f"Cosmos DB contract tests need the local server: {exc}", pytrace=False)
    try:
        yield server.endpoint
    finally:
        server.stop()


@pytest.fixture(scope="session")
def cosmos_database(cosmos_endpoint: str) -> str:
    name = f"contract-{uuid.uuid4().hex[:12]}"
    with open_client(cosmos_endpoint, EMULATOR_KEY, connection_verify=False) as client:
        open_database(client, name, create_if_missing=True)
    return name


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["sqlite", pytest.param("cosmos", marks=pytest.mark.cosmos)])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_stores(
    backend: str, tmp_path: Path, clock: ManualClock, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Stores]]:
    """Open another pair of stores on the same data (a second process or client)."""
    if backend == "sqlite":
        settings = {
            "orders_path": tmp_path / "orders.sqlite",
            "state_path": tmp_path / "state.sqlite",
        }
    else:
        suffix = uuid.uuid4().hex[:12]
        settings = {
            "endpoint": request.getfixturevalue("cosmos_endpoint"),
            "database": request.getfixturevalue("cosmos_database"),
            "credential": EMULATOR_KEY,
            "orders_container": f"orders-{suffix}",
            "state_container": f"states-{suffix}",
            "compensation_container": f"compensation-{suffix}",
            "inventory_container": f"inventory-{suffix}",
            "create_containers": True,
            "connection_verify": False,
        }
    opened: list[Stores] = []

    def make() -> Stores:
        stores = create_stores(backend, clock=clock, **settings)
        opened.append(stores)
        return stores

    yield make
    for stores in opened:
        stores.close()
    if backend == "cosmos":
        with open_client(settings["endpoint"], EMULATOR_KEY, connection_verify=False) as client:
            db = open_database(client, settings["database"])
            for name in (settings["orders_container"], settings["state_container"],
                         settings["compensation_container"], settings["inventory_container"]):
                db.delete_container(name)


@pytest.fixture
def stores(make_stores: Callable[[], Stores]) -> Stores:
    return make_stores()
