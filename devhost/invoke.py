"""Call an app function the way the Python worker does: sync or async, keyword arguments.

Async functions run on an event loop owned by the calling thread (one per worker thread,
reused across calls), so aiohttp sessions the SDK's durable client opens are closed on the
loop that made them.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any

_local = threading.local()


def _loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
    return loop


def call(func: Any, kwargs: dict[str, Any]) -> Any:
    """Call ``func(**kwargs)``, running it to completion if it is a coroutine function.

    Parameters
    ----------
    func : callable
        The user function.
    kwargs : dict
        Arguments by binding name; names the function does not take are left out unless it
        accepts ``**kwargs``.

    Returns
    -------
    Any
        What the function returned.
    """
    params = inspect.signature(func).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    result = func(**kwargs)
    if inspect.isawaitable(result):
        return _loop().run_until_complete(result)
    return result
