"""The console line of a failed function execution, as Core Tools prints it.

Core Tools shows every execution of the app's functions as
``Executed 'Functions.<name>' (Failed, Id=<invocation id>, Duration=<n>ms)`` followed by the
worker's ``Exception: <type>: <message>``; the local host prints the failed ones as one line
at ERROR, with the stack at DEBUG, so an activity or an HTTP function that raises is seen in
the console without reading the task hub (docs/local-host.md, "Console").
"""

from __future__ import annotations

import logging
import time
import uuid

from devhost.failures.failure_texts import worker_message, worker_stack

log = logging.getLogger("devhost.functions")


def log_failed(name: str, started_s: float, exc: BaseException) -> None:
    """Log one ERROR line for a failed execution of function ``name``.

    Parameters
    ----------
    name : str
        The function's name as the app registers it.
    started_s : float
        ``time.monotonic()`` when the execution started (the line's ``Duration``).
    exc : BaseException
        What the function raised; its text is the Python worker's (``worker_message``).
    """
    duration_ms = round((time.monotonic() - started_s) * 1000)
    invocation = uuid.uuid4()
    log.error("Executed 'Functions.%s' (Failed, Id=%s, Duration=%dms): %s",
              name, invocation, duration_ms, worker_message(exc))
    log.debug("Executed 'Functions.%s' (Id=%s) stack:\n%s", name, invocation, worker_stack(exc))
