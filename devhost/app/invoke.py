"""Call an app function the way the Python worker does: sync or async, keyword arguments.

The Python worker runs every ``async def`` function on its one event loop, and the Durable
SDK relies on that: its durable client keeps one process-wide aiohttp session, bound to the
loop that created it. So async functions here run on a single shared loop in a background
thread (:func:`run`); sync functions run in the calling worker thread. An async function
that blocks that loop is named in a warning (:mod:`devhost.app.loop_watch`).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from devhost.app.function_context import LocalContext
from devhost.app.loop_watch import Timed, threshold_s
from devhost.app.signature_check import CONTEXT_PARAM

T = TypeVar("T")


class FunctionExit(RuntimeError):
    """A function raised ``SystemExit`` or ``KeyboardInterrupt`` (``sys.exit()`` in app code).

    The host treats it as that function's failure (TaskFailed, a failed orchestration, an
    abandoned message), so one function cannot stop a host thread or the event loop.
    """


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
    """Call ``func(*args, **kwargs)``, turning ``SystemExit``/``KeyboardInterrupt`` into failure.

    Raises
    ------
    FunctionExit
        If ``func`` raised ``SystemExit`` or ``KeyboardInterrupt``.
    """
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
    """Run a coroutine on the shared worker event loop and wait for its result.

    Tests use this to call the SDK's durable client, as app code on the same loop would.

    Parameters
    ----------
    coro : coroutine
        The awaitable to run.

    Returns
    -------
    Any
        The coroutine's result (its exception is raised here).
    """
    return asyncio.run_coroutine_threadsafe(coro, _worker_loop()).result()


def call(func: Any, kwargs: dict[str, Any]) -> Any:
    """Call ``func(**kwargs)``; a coroutine function runs on the shared worker loop.

    Parameters
    ----------
    func : callable
        The user function.
    kwargs : dict
        Arguments by binding name; names the function does not take are left out unless it
        accepts ``**kwargs``. A ``context`` parameter not given here receives an
        ``azure.functions.Context``, as the Python worker passes one.

    Returns
    -------
    Any
        What the function returned.

    Raises
    ------
    FunctionExit
        If the function raised ``SystemExit`` or ``KeyboardInterrupt``; any other
        exception propagates as raised.
    """
    params = inspect.signature(func).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    if CONTEXT_PARAM in params and CONTEXT_PARAM not in kwargs:
        kwargs = {**kwargs, CONTEXT_PARAM: LocalContext(func)}
    if inspect.iscoroutinefunction(func):
        return run(_guarded(func(**kwargs), func))
    result = call_guarded(func, **kwargs)
    if inspect.isawaitable(result):
        return run(_guarded(result, func))
    return result


def close_sdk_session(timeout_s: float = 2.0) -> None:
    """Close the durable SDK's process-wide aiohttp session on the shared loop, if any.

    The SDK keeps one ``ClientSession`` per process and has no shutdown hook (its own
    comment says process exit cleans up); a host that stops while the process goes on
    (tests, Ctrl-C with logging still on) would otherwise log "Unclosed client session".
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
