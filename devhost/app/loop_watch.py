"""Warn when an app's async function blocks the shared event loop (Azure parity).

Deployed, one async function's synchronous I/O stalls every other (docs/local-host.md); each
stretch between two ``await``s longer than ``DEVHOST_LOOP_BLOCK_WARN_MS`` is named; only warns.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Generator
from typing import Any

log = logging.getLogger("devhost.loop")

SETTING = "DEVHOST_LOOP_BLOCK_WARN_MS"
DEFAULT_THRESHOLD_MS = 100.0


def threshold_s() -> float:
    """Return ``DEVHOST_LOOP_BLOCK_WARN_MS`` in seconds (0: off); ValueError unless >= 0."""
    raw = os.environ.get(SETTING, "").strip()
    if not raw:
        return DEFAULT_THRESHOLD_MS / 1000
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{SETTING}: must be milliseconds (a number >= 0); got {raw!r}") \
            from None
    if value < 0:
        raise ValueError(f"{SETTING}: must be >= 0 milliseconds; got {raw!r}")
    return value / 1000


class Timed:
    """Await ``awaitable``, timing each stretch it runs without yielding (``limit_s`` 0: off)."""

    def __init__(self, awaitable: Awaitable[Any], name: str, limit_s: float) -> None:
        self._inner = awaitable.__await__()
        self._name = name
        self._limit_s = limit_s

    def __await__(self) -> Generator[Any, Any, Any]:
        """Drive the inner coroutine step by step, measuring each step."""
        send: Any = None
        throw: BaseException | None = None
        while True:
            started = time.perf_counter()
            try:
                step = self._inner.throw(throw) if throw else self._inner.send(send)
            except StopIteration as done:
                self._check(started)
                return done.value
            except BaseException:
                self._check(started)
                raise
            self._check(started)
            try:
                send, throw = (yield step), None
            except BaseException as exc:  # cancellation or a failed future: pass it in
                send, throw = None, exc

    def _check(self, started: float) -> None:
        blocked = time.perf_counter() - started
        if self._limit_s and blocked > self._limit_s:
            log.warning(
                "async function %s blocked the event loop for %.0f ms (more than %s=%.0f): "
                "the Python worker runs every async function of a process on one loop, so "
                "deployed every other async invocation waits meanwhile; run synchronous "
                "I/O with asyncio.to_thread or make the function sync", self._name,
                blocked * 1000, SETTING, self._limit_s * 1000)
