"""App code that calls sys.exit() fails its function, not the host's threads or loop."""

import sys

import pytest

from devhost.app import invoke


async def async_exits(x):
    sys.exit(f"bye {x}")


async def async_double(x):
    return 2 * x


def sync_exits(x):
    raise KeyboardInterrupt


def test_async_sys_exit_is_a_failure_and_the_shared_loop_keeps_running():
    with pytest.raises(invoke.FunctionExit, match=r"async_exits raised SystemExit\(bye 1\)"):
        invoke.call(async_exits, {"x": 1})
    assert invoke.call(async_double, {"x": 21}) == 42


def test_sync_keyboard_interrupt_is_a_failure():
    with pytest.raises(invoke.FunctionExit, match="sync_exits raised KeyboardInterrupt"):
        invoke.call(sync_exits, {"x": 1})
