"""The ``azure.functions.Context`` the Python worker passes to a ``context`` parameter.

A function that takes a parameter named ``context`` which no binding declares gets the
invocation's context from the worker (see :mod:`devhost.app.signature_check`): invocation id,
function name and directory, a trace context and a retry context. The local host builds
the same object for every such call (:func:`devhost.app.invoke.call`).
"""

from __future__ import annotations

import inspect
import threading
import uuid
from pathlib import Path
from typing import Any

from azure.functions import _abc as func_abc


class LocalTraceContext(func_abc.TraceContext):
    """An empty W3C trace context (the local host starts no distributed trace)."""

    @property
    def trace_state(self) -> str:
        """Return the ``tracestate`` (empty)."""
        return ""

    @property
    def trace_parent(self) -> str:
        """Return the ``traceparent`` (empty)."""
        return ""

    @property
    def attributes(self) -> dict[str, str]:
        """Return the trace attributes (none)."""
        return {}


class LocalRetryContext(func_abc.RetryContext):
    """Retry context of a first attempt (no retry policy runs in the local host)."""

    @property
    def retry_count(self) -> int:
        """Return the retry count (0)."""
        return 0

    @property
    def max_retry_count(self) -> int:
        """Return the maximum retry count (0)."""
        return 0

    @property
    def exception(self) -> Any:
        """Return the previous attempt's exception (None)."""
        return None


class LocalContext(func_abc.Context):
    """One invocation's context.

    Parameters
    ----------
    func : callable
        The user function (its name and folder fill ``function_name`` and
        ``function_directory``).
    """

    def __init__(self, func: Any) -> None:
        target = inspect.unwrap(func)
        self._name = getattr(target, "__name__", repr(target))
        try:
            self._directory = str(Path(inspect.getfile(target)).parent)
        except TypeError:
            self._directory = ""
        self._invocation_id = str(uuid.uuid4())
        self._local = threading.local()

    @property
    def invocation_id(self) -> str:
        """Return this invocation's id (a new GUID per call)."""
        return self._invocation_id

    @property
    def thread_local_storage(self) -> Any:
        """Return storage local to this invocation's thread."""
        return self._local

    @property
    def function_name(self) -> str:
        """Return the function's name."""
        return self._name

    @property
    def function_directory(self) -> str:
        """Return the folder of the function's source file."""
        return self._directory

    @property
    def trace_context(self) -> LocalTraceContext:
        """Return the trace context (empty)."""
        return LocalTraceContext()

    @property
    def retry_context(self) -> LocalRetryContext:
        """Return the retry context (first attempt)."""
        return LocalRetryContext()
