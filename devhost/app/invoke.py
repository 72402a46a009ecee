"""Call an app function as the Python worker does: sync in the caller's thread, async on one loop.

The worker runs every ``async def`` on its one event loop, and the Durable SDK's process-wide
aiohttp session is bound to it; so do we (:func:`run`), warning of blocking (:mod:`.loop_watch`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import logging
import re
import threading
import warnings
from collections.abc import Coroutine
from typing import Any, TypeVar

from devhost.app.function_context import LocalContext
from devhost.app.loop_watch import Timed, threshold_s
from devhost.app.signature_check import CONTEXT_PARAM

SDK_DEPRECATION = r"azure\.functions df_loads was called without expected_type"
"""azure-functions 1.26's one-time DeprecationWarning about the Durable SDK's own ``df_loads``
calls: the SDK's code, not the app's, so nothing an app can change; the host hides it, and
the same text azure-functions logs at INFO with it (each start printed it)."""
warnings.filterwarnings("ignore", message=SDK_DEPRECATION, category=DeprecationWarning)
logging.getLogger("azure.functions.DurableFunctions").addFilter(
    lambda record: re.match(SDK_DEPRECATION, record.getMessage()) is None)


T = TypeVar("T")


class FunctionExit(RuntimeError):
    """A function raised SystemExit/KeyboardInterrupt: its failure, never the host thread's stop."""


def _as_failure(exc: BaseException, func: Any) -> FunctionExit:
    name = getattr(func, "__name__", repr(func))
    return FunctionExit(f"{name} raised {type(exc).__name__}({exc})")


async def _guarded(awaitable: Any, func: Any) -> Any:
    name = getattr(func, "__name__", repr(func))
    try:
        return await Timed(awaitable, name, threshold_s())
    except (SystemExit, KeyboardInterrupt) as exc:  # would stop the shared loop
        raise _as_failure(exc, func) from exc


def call_guarded(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """Call ``func``; FunctionExit if it raised ``SystemExit`` or ``KeyboardInterrupt``."""
    try:
        return func(*args, **kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _as_failure(exc, func) from exc
_loop: asyncio.AbstractEventLoop | None = None
_guard = threading.Lock()


def _worker_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _guard:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="devhost-async-worker",
                             daemon=True).start()
            _loop = loop
        return _loop


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the shared worker loop and return its result (tests call the SDK so)."""
    return asyncio.run_coroutine_threadsafe(coro, _worker_loop()).result()


def call(func: Any, kwargs: dict[str, Any]) -> Any:
    """Call ``func`` with the ``kwargs`` it takes (all for ``**kwargs``); async on the shared loop.

    An unpassed ``context`` parameter gets an ``azure.functions.Context``; FunctionExit as above.
    """
    kwargs, is_async = _bound(func, kwargs)
    if is_async:
        return run(_guarded(func(**kwargs), func))
    result = call_guarded(func, **kwargs)
    if inspect.isawaitable(result):
        return run(_guarded(result, func))
    return result


def is_async(func: Any) -> bool:
    """Return True if :func:`call` runs ``func`` on the shared loop (an ``async def``)."""
    return _shape_of(func)[2]


def start(func: Any, kwargs: dict[str, Any]) -> concurrent.futures.Future[Any]:
    """Start an ``async def`` ``func`` on the shared loop as :func:`call` would; return its future.

    For a caller that must not block while it runs (the Service Bus dispatcher): the future
    holds the result or the exception :func:`call` would raise. Raises TypeError if ``func``
    is not async (:func:`is_async`), and what creating its coroutine raises.
    """
    kwargs, is_async_func = _bound(func, kwargs)
    if not is_async_func:
        raise TypeError(f"{getattr(func, '__name__', func)!r} is not an async function")
    return asyncio.run_coroutine_threadsafe(_guarded(func(**kwargs), func), _worker_loop())


def _bound(func: Any, kwargs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Return the ``kwargs`` ``func`` takes, a ``context`` added if it wants one, and is-async."""
    params, takes_any, is_async_func = _shape_of(func)
    if not takes_any:
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    if CONTEXT_PARAM in params and CONTEXT_PARAM not in kwargs:
        kwargs = {**kwargs, CONTEXT_PARAM: LocalContext(func)}
    return kwargs, is_async_func


def _shape_of(func: Any) -> tuple[frozenset[str], bool, bool]:
    try:
        return _cached_shape(func)
    except TypeError:  # an unhashable callable object
        return _shape(func)


def _shape(func: Any) -> tuple[frozenset[str], bool, bool]:
    """Return a function's parameter names, whether it takes ``**kwargs``, whether async."""
    params = inspect.signature(func).parameters
    return (frozenset(params),
            any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()),
            inspect.iscoroutinefunction(func))


_cached_shape = functools.lru_cache(maxsize=1024)(_shape)
"""The signature is read per call otherwise (a profile's 1.2% of the host's CPU)."""


def close_sdk_session(timeout_s: float = 2.0) -> None:
    """Close the SDK's process-wide aiohttp session on the shared loop, if any.

    The SDK has no shutdown hook; a host stopping in a live process logs "Unclosed client session".
    """
    with _guard:
        loop = _loop
    if loop is None or loop.is_closed():
        return
    try:
        from azure.durable_functions.models.utils import http_utils
    except ImportError:  # an SDK without the shared session: nothing to close
        return
    close = getattr(http_utils, "_close_session", None)
    if close is None:
        return
    try:
        asyncio.run_coroutine_threadsafe(close(), loop).result(timeout=timeout_s)
    except Exception:  # noqa: BLE001 - best effort at shutdown; exit cleans up anyway
        pass
