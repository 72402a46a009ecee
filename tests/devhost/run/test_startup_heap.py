"""The host's start-up heap: no collections while it is built, one after, survivors frozen."""

import contextlib
import gc
import weakref

import pytest

from devhost.run import cli
from devhost.run.startup_heap import long_lived_startup


class _Node:
    me: object = None


@pytest.fixture
def collector():
    """Record each collection's generation while ``recording``; restore the collector after."""
    enabled = gc.isenabled()
    seen: list[int] = []
    state = {"recording": False}

    def note(phase: str, info: dict) -> None:
        if phase == "start" and state["recording"]:
            seen.append(info["generation"])

    gc.enable()
    gc.callbacks.append(note)

    @contextlib.contextmanager
    def recording():
        state["recording"] = True
        try:
            yield seen
        finally:
            state["recording"] = False

    yield recording
    gc.callbacks.remove(note)
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_the_block_runs_without_collections_and_its_survivors_are_frozen(collector):
    freed: list[str] = []
    with collector() as seen, long_lived_startup():
        assert not gc.isenabled()
        kept = [[i] for i in range(5 * gc.get_threshold()[0])]  # enough to set one off
        cycle = _Node()
        cycle.me = cycle
        weakref.finalize(cycle, freed.append, "cycle")
        del cycle
        assert seen == [] and freed == []
    assert seen == [2], "one full collection, on leaving"
    assert freed == ["cycle"], "the block's cyclic garbage is freed, not frozen"
    assert gc.isenabled()
    assert gc.is_tracked(kept) and gc.get_freeze_count() >= len(kept)
    assert not any(o is kept for o in gc.get_objects()), "the survivors are in no generation"


def test_a_failed_block_freezes_nothing_and_restores_the_collector(collector):
    frozen = gc.get_freeze_count()
    with collector() as seen:
        with pytest.raises(RuntimeError, match="build failed"), long_lived_startup():
            made = [[1], [2]]
            raise RuntimeError("build failed")
        assert seen == [] and gc.isenabled() and gc.get_freeze_count() == frozen
    assert any(o is made for o in gc.get_objects()), "a failed attempt's objects stay collectable"
    gc.disable()  # a collector off before stays off
    with long_lived_startup():
        pass
    assert not gc.isenabled()


def test_the_cli_builds_the_host_with_the_collector_paused(collector, monkeypatch):
    built: list[bool] = []

    def build_host(**kwargs):
        built.append(gc.isenabled())
        return "host"

    monkeypatch.setattr("devhost.run.runtime.build_host", build_host)
    assert cli._build_or_exit(app_dir="app") == "host"
    assert built == [False] and gc.isenabled()
