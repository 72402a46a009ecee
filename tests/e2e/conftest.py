import pytest

from clocks import ManualClock
from tests.e2e.harness import System


@pytest.fixture
def make_system(tmp_path, monkeypatch):
    systems = []

    def factory(**kwargs):
        system = System(tmp_path, ManualClock(), monkeypatch, **kwargs)
        systems.append(system)
        return system

    yield factory
    for s in systems:
        s.close()
