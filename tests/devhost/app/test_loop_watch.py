"""An async function that blocks the shared event loop is named in a warning (Azure parity)."""

import asyncio
import logging
import time

import pytest

from devhost.app import invoke
from devhost.app.loop_watch import SETTING, threshold_s
from tests.e2e.harness import make_order

WARNING = "blocked the event loop"


async def blocking_starter(timer):
    time.sleep(0.25)  # a sync SDK call in an async function
    return "done"


async def polite_starter(timer):
    await asyncio.to_thread(time.sleep, 0.25)
    await asyncio.sleep(0)
    return "done"


async def failing_after_block(timer):
    time.sleep(0.15)
    raise ValueError("bad sku")


def test_a_blocking_async_function_is_named_in_a_warning(caplog):
    caplog.set_level(logging.WARNING, logger="devhost.loop")
    assert invoke.call(blocking_starter, {"timer": None}) == "done"
    [record] = [r for r in caplog.records if WARNING in r.getMessage()]
    message = record.getMessage()
    assert "blocking_starter" in message and "asyncio.to_thread" in message
    assert int(message.split("for ")[1].split(" ms")[0]) >= 250


def test_awaiting_work_off_the_loop_stays_silent(caplog):
    caplog.set_level(logging.WARNING, logger="devhost.loop")
    assert invoke.call(polite_starter, {"timer": None}) == "done"
    assert [r for r in caplog.records if WARNING in r.getMessage()] == []


def test_the_function_s_own_outcome_is_unchanged(caplog):
    caplog.set_level(logging.WARNING, logger="devhost.loop")
    with pytest.raises(ValueError, match="bad sku"):
        invoke.call(failing_after_block, {"timer": None})
    assert any("failing_after_block" in r.getMessage() for r in caplog.records)


def test_the_threshold_is_a_setting(monkeypatch):
    assert threshold_s() == 0.1
    monkeypatch.setenv(SETTING, "250")
    assert threshold_s() == 0.25
    monkeypatch.setenv(SETTING, "soon")
    with pytest.raises(ValueError, match=SETTING):
        threshold_s()


def test_the_app_s_own_async_functions_never_block_the_loop(make_system, caplog,
                                                           monkeypatch):
    # Every state store call made on the event loop takes as long as a slow Cosmos DB round
    # trip would: the starter and the reply handler must still never hold the loop while
    # they wait. A call off the loop (asyncio.to_thread) cannot block it, so it need not
    # wait in real time.
    from orders.stores.sqlite_state import SqliteStateStore

    off_loop = []
    for method in ("find_startable", "count_by_state", "replace", "get"):
        real = getattr(SqliteStateStore, method)

        def slow(self, *args, _real=real, _method=method, **kwargs):
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                off_loop.append(_method)
            else:
                time.sleep(0.12)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(SqliteStateStore, method, slow)
    caplog.set_level(logging.WARNING, logger="devhost.loop")
    system = make_system()
    for n in range(60, 64):
        system.submit(make_order(n))
    system.run(30)
    assert system.states(f"ORD-{n:05d}" for n in range(60, 64)) == {"Processed": 4}
    assert [r.getMessage() for r in caplog.records if WARNING in r.getMessage()] == []
    assert {"find_startable", "replace", "get"} <= set(off_loop)
