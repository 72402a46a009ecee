"""The host's start-up heap: no collections while it is built, one after, survivors frozen."""

import gc
import weakref

import pytest

from devhost.run.startup_heap import long_lived_startup


class _Node:
    me: object = None


@pytest.fixture
def collector():
    """Record each collection's generation; restore the collector's state afterwards."""
    enabled = gc.isenabled()
    seen: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.enable()
    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_the_block_runs_without_collections_and_its_survivors_are_frozen(collector):
    freed: list[str] = []
    with long_lived_startup():
        assert not gc.isenabled()
        kept = [[i] for i in range(5 * gc.get_threshold()[0])]  # enough to set one off
        cycle = _Node()
        cycle.me = cycle
        weakref.finalize(cycle, freed.append, "cycle")
        del cycle
        assert collector == [] and freed == []
    assert collector == [2], "one full collection, on leaving"
    assert freed == ["cycle"], "the block's cyclic garbage is freed, not frozen"
    assert gc.isenabled()
    assert gc.is_tracked(kept) and gc.get_freeze_count() >= len(kept)
    assert not any(o is kept for o in gc.get_objects()), "the survivors are in no generation"


def test_an_error_in_the_block_still_freezes_and_restores_the_collector(collector):
    with pytest.raises(RuntimeError, match="build failed"), long_lived_startup():
        made = [[1], [2]]
        raise RuntimeError("build failed")
    assert gc.isenabled() and collector == [2]
    assert not any(o is made for o in gc.get_objects())
    gc.disable()  # a collector off before stays off
    with long_lived_startup():
        pass
    assert not gc.isenabled()
