"""The host process's start-up heap: built without cyclic collections, then frozen.

Starting a host process imports the app and everything it uses (the Functions and Durable
SDKs, pydantic, OpenTelemetry): about 100,000 objects that live as long as the process. With
the collector on, every full collection walks all of them: one while they are imported,
then one every few seconds of work. :func:`long_lived_startup` pauses the collector while
the host is built, collects once, and moves what survived to the permanent generation
(``gc.freeze``), so a later full collection walks only what was made since. CPython's
``gc`` documentation gives the same steps (disable early, freeze once the start-up state is
built) for a process that forks. The app's objects made later are collected as in any
Python worker; measured in docs/performance.md ("The start-up heap frozen").
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["long_lived_startup"]


@contextmanager
def long_lived_startup() -> Iterator[None]:
    """Run the block with the cyclic collector paused; if it succeeds, collect and freeze.

    On success ``gc.collect()`` frees the block's cyclic garbage, so nothing unreachable is
    frozen, and ``gc.freeze()`` moves the survivors to the permanent generation. On an
    error nothing is frozen (the error's traceback still holds what the block made; a
    retried start must not keep each failed attempt's objects for good). Either way the
    collector is on again afterwards if it was on before.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.collect()
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()
