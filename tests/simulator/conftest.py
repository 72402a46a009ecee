from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from clocks import ManualClock
from simulator import create_app


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


@pytest.fixture
async def make_client(
    clock: ManualClock, ledger_path: Path
) -> AsyncIterator[Callable[..., httpx.AsyncClient]]:
    """Build the simulator app in-process and an httpx client on its ASGI transport."""
    made: list[tuple[httpx.AsyncClient, object]] = []

    def make(config=None, *, sleep=None, path: Path | None = None) -> httpx.AsyncClient:
        app = create_app(config, clock, path or ledger_path, sleep=sleep)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost"
        )
        made.append((client, app))
        return client

    yield make
    for client, app in made:
        await client.aclose()
        app.state.ledger.close()
