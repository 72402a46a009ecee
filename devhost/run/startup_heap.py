"""The host process's start-up heap: built without cyclic collections, then frozen.

Starting a host process imports the app and everything it uses (the Functions and Durable
SDKs, pydantic, OpenTelemetry): about 100,000 objects that live as long as the process. With
the collector on, the imports alone set off full collections, each a walk over all of
them, and every later full collection walks them again. :func:`long_lived_startup` pauses
the collector while the host is built, collects once, and moves what survived to the
permanent generation (``gc.freeze``), which later collections skip. CPython's ``gc``
documentation gives the same steps (disable early, freeze once the start-up state is
built) for a process that forks; here they spare the later walks. The app's objects made
later are collected as in any Python worker; measured in docs/performance.md ("The
start-up heap frozen").
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["long_lived_startup"]


@contextmanager
def long_lived_startup() -> Iterator[None]:
    """Run the block with the cyclic collector paused, then collect once and freeze.

    On leaving (also by an error), ``gc.collect()`` frees the block's cyclic garbage, so
    nothing unreachable is frozen, and ``gc.freeze()`` moves the survivors to the
    permanent generation; the collector is then on again if it was on before.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()
        if was_enabled:
            gc.enable()
