"""The worker's load-time check of parameters against bindings.

As ``FunctionRegistry.add_indexed_function`` does it, so a decorator from another registry
(a Blueprint's ``durable_client_input``) fails at start-up, not with a TypeError per call.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

from devhost.app.load_errors import AppLoadError, display_path

CONTEXT_PARAM = "context"
"""The parameter the worker fills with an ``azure.functions.Context`` when unbound."""


def _location(func: Any, app_dir: Path | None) -> str:
    # The SDK's orchestrator and entity handlers keep the user's function beside them.
    target = inspect.unwrap(getattr(func, "orchestrator_function", None)
                            or getattr(func, "entity_function", None) or func)
    try:
        file = inspect.getsourcefile(target) or ""
        line = target.__code__.co_firstlineno
    except (TypeError, AttributeError):
        return ""
    shown = display_path(file, app_dir) if app_dir else file
    return f"{shown}:{line}: "


def check_parameters(name: str, func: Any, binding_names: list[str],
                     app_dir: Path | None = None) -> bool:
    """Check a function's signature (``__wrapped__`` followed) against its bindings' names.

    Return whether it takes a ``context`` no binding declares. Raises AppLoadError
    ``file:line: cannot load the <name> function: ...`` for a parameter only in Python or only in
    the bindings, or a ``context`` annotated with another type than ``azure.functions.Context``.
    """
    where = _location(func, app_dir)
    params = dict(inspect.signature(func).parameters)
    try:
        annotations = typing.get_type_hints(func)
    except Exception as exc:  # noqa: BLE001 - the worker's get_type_hints fails the load too
        raise AppLoadError(f"{where}cannot load the {name} function: its type annotations "
                           f"cannot be resolved ({type(exc).__name__}: {exc})") from exc
    bound = {b for b in binding_names if b != "$return"}
    requires_context = CONTEXT_PARAM in params and CONTEXT_PARAM not in bound
    if requires_context:
        params.pop(CONTEXT_PARAM)
        anno = annotations.get(CONTEXT_PARAM)
        if anno is not None and (not isinstance(anno, type) or anno.__name__ != "Context"):
            raise AppLoadError(f"{where}cannot load the {name} function: the \"context\" "
                               "parameter is expected to be of type azure.functions.Context, "
                               f"got {anno!r}")
    only_python = set(params) - bound
    if only_python:
        raise AppLoadError(
            f"{where}cannot load the {name} function: the following parameters are declared "
            f"in Python but not in function.json: {only_python!r} (no binding of this "
            "function declares them; was a decorator applied from another app or blueprint?)")
    only_bindings = bound - set(params)
    if only_bindings:
        raise AppLoadError(
            f"{where}cannot load the {name} function: the following parameters are declared "
            f"in function.json but not in Python: {only_bindings!r}")
    return requires_context
