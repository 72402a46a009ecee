"""pytest plugin of ``durable-devhost``: the ``durable_host`` fixture (docs/testing.md).

Registered through the ``pytest11`` entry point, so installing the wheel is enough. The app
folder is, first found: the ``--durable-app-dir`` option, the ``durable_app_dir`` ini
setting (relative to the ini file), else the folder pytest's configuration is in; a
conftest may also override the ``durable_app_dir`` fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

OPTION = "durable_app_dir"
"""Name of the ini setting, and (with dashes) of the command-line option."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--durable-app-dir`` and the ``durable_app_dir`` ini setting."""
    help_text = "The Durable Functions app folder the durable_host fixture loads (host.json)."
    parser.addoption("--durable-app-dir", dest=OPTION, default=None, help=help_text)
    parser.addini(OPTION, help_text, default=None)


FIXTURES = ("durable_host", "durable_host_factory")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Import the host and the SDK once, at collection, if a collected test uses the fixture.

    Importing them (``azure.durable_functions`` brings aiohttp; the HTTP API uvicorn and
    starlette) takes a second or more once per process; done here, it is the session's
    start-up, not the first test's time.
    """
    if any(name in FIXTURES for item in session.items
           for name in getattr(item, "fixturenames", ())):
        import azure.durable_functions  # noqa: F401
        import uvicorn  # noqa: F401

        import devhost.run.http_host  # noqa: F401
        import devhost.run.runtime  # noqa: F401
        import devhost.testing.host  # noqa: F401


@pytest.fixture
def durable_app_dir(request: pytest.FixtureRequest) -> Path:
    """Return the app folder the ``durable_host`` fixture loads (see the module's rules).

    Fails the test with one line naming the folder and the option if that folder holds
    no ``host.json``.
    """
    config = request.config
    given = config.getoption(OPTION)
    if given:
        folder = Path(given)
    elif config.getini(OPTION):
        base = config.inipath.parent if config.inipath else config.rootpath
        folder = base / str(config.getini(OPTION))
    else:
        folder = config.inipath.parent if config.inipath else config.rootpath
    folder = folder.resolve()
    if not (folder / "host.json").is_file():
        pytest.fail(f"durable_host: no app in {folder} (no host.json); set durable_app_dir "
                    "in the pytest ini file or pass --durable-app-dir", pytrace=False)
    return folder


@pytest.fixture
def durable_host_factory(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Return ``make(app_dir, **options)`` building a :class:`DurableHost`, closed after the test.

    ``options`` go to :class:`devhost.testing.DurableHost` (``clock``, ``settings``). An app
    that fails to load fails the test with the loader's one-line message.
    """
    from devhost.app.load_errors import AppLoadError
    from devhost.testing.host import DurableHost

    hosts: list[DurableHost] = []

    def make(app_dir: str | Path, **options: Any) -> DurableHost:
        try:
            host = DurableHost(app_dir, tmp_path / f"devhost-{len(hosts)}", **options)
        except AppLoadError as exc:  # its one line, without the loader's traceback
            raise pytest.fail.Exception(f"durable_host: the app fails to load: {exc}",
                                        pytrace=False) from None
        hosts.append(host)
        return host

    yield make
    for host in reversed(hosts):
        host.close()


@pytest.fixture
def durable_host(durable_app_dir: Path, durable_host_factory: Callable[..., Any]) -> Any:
    """Return a :class:`devhost.testing.DurableHost` running the app on a manual clock."""
    return durable_host_factory(durable_app_dir)
