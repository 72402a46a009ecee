"""The async functions' own bounded thread pool for their blocking calls.

The Python worker runs ``async def`` functions on its event loop and ``def`` functions on
the pool of ``PYTHON_THREADPOOL_THREAD_COUNT`` threads. ``asyncio.to_thread`` in an async
function uses neither: it goes to the loop's default executor, ``min(32, CPUs + 4)``
threads (five on a one-vCPU Flex instance), shared by every async function of the process
and sized by nothing the deployment sets (azure-functions-python-worker,
``dispatcher.py``; Python ``asyncio.loop.run_in_executor``). The starter, the submission
triggers, the reply router and the ops routes put their store and Service Bus calls here
instead: a pool of :data:`OFFLOAD_THREADS`, as many as one Service Bus trigger's
``maxConcurrentCalls`` in host.json, so a full batch of replies never queues behind five
threads (docs/deploy.md, "Concurrency").
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

OFFLOAD_THREADS = 16
"""Threads of the pool: host.json's ``serviceBus.maxConcurrentCalls`` (tests/infra checks)."""

P = ParamSpec("P")
R = TypeVar("R")

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def executor() -> ThreadPoolExecutor:
    """Return the process's pool, created on first use."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(OFFLOAD_THREADS, thread_name_prefix="orders-offload")
        return _executor


async def off_loop(func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a blocking ``func(*args, **kwargs)`` on :func:`executor`; return its result.

    As ``asyncio.to_thread``, the call sees the caller's context variables (the order's
    log context, the trace span). Raises what ``func`` raises.
    """
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await loop.run_in_executor(executor(), call)
