"""The ``azure.functions.Context`` the worker passes to an unbound ``context`` parameter."""

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
        """Return ``''``."""
        return ""

    @property
    def trace_parent(self) -> str:
        """Return ``''``."""
        return ""

    @property
    def attributes(self) -> dict[str, str]:
        """Return ``{}``."""
        return {}


class LocalRetryContext(func_abc.RetryContext):
    """Retry context of a first attempt (no retry policy runs in the local host)."""

    @property
    def retry_count(self) -> int:
        """Return 0."""
        return 0

    @property
    def max_retry_count(self) -> int:
        """Return 0."""
        return 0

    @property
    def exception(self) -> Any:
        """Return None."""
        return None


class LocalContext(func_abc.Context):
    """One invocation's context; ``func``'s name and source folder fill its fields."""

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
        """Return a GUID, new per call."""
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
