"""Discover an app's functions the way the Functions host does: from its own metadata.

The Python worker answers the host's metadata request with ``app.get_functions()``; this
module reads the same list, resolves ``%Setting%`` binding expressions from the environment,
and loads ``local.settings.json`` Values into the environment first, as ``func start`` does.
An app that uses a binding this host cannot run fails at start-up, naming it.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUPPORTED_BINDINGS = ("orchestrationTrigger", "activityTrigger", "durableClient",
                      "serviceBusTrigger", "timerTrigger", "httpTrigger", "http")
"""Binding types the local host implements."""

_SETTING = re.compile(r"%([^%]+)%")


class AppLoadError(Exception):
    """The app cannot be loaded or uses something the local host cannot run."""


@dataclass(frozen=True)
class FunctionDef:
    """One function of the app, as its metadata describes it.

    Attributes
    ----------
    name : str
        Function name.
    func : callable
        The user function (for orchestrators: the SDK's handler wrapping it).
    trigger : dict
        The trigger binding, with ``%Setting%`` expressions resolved.
    trigger_param : str
        Parameter name the trigger value is passed as.
    client_param : str or None
        Parameter name of a ``durableClient`` input binding, if any.
    """

    name: str
    func: Any
    trigger: dict[str, Any]
    trigger_param: str
    client_param: str | None = None

    @property
    def is_async(self) -> bool:
        """Whether the user function is a coroutine function."""
        return inspect.iscoroutinefunction(self.func)


@dataclass
class AppIndex:
    """The app's functions grouped by trigger type."""

    orchestrators: dict[str, FunctionDef] = field(default_factory=dict)
    activities: dict[str, FunctionDef] = field(default_factory=dict)
    service_bus: list[FunctionDef] = field(default_factory=list)
    timers: list[FunctionDef] = field(default_factory=list)
    http: list[FunctionDef] = field(default_factory=list)


def load_local_settings(app_dir: Path) -> dict[str, str]:
    """Load ``local.settings.json`` Values into ``os.environ`` (existing variables win).

    Parameters
    ----------
    app_dir : Path
        Folder holding the app's ``local.settings.json`` (optional file).

    Returns
    -------
    dict
        The Values found (empty if there is no file).

    Raises
    ------
    AppLoadError
        If the file is not valid JSON or ``Values`` is not an object of strings.
    """
    path = app_dir / "local.settings.json"
    if not path.exists():
        return {}
    try:
        values = json.loads(path.read_text()).get("Values", {})
    except json.JSONDecodeError as exc:
        raise AppLoadError(f"local.settings.json: not valid JSON ({exc})") from exc
    if not isinstance(values, dict):
        raise AppLoadError("local.settings.json: Values must be an object")
    for key, value in values.items():
        if not isinstance(value, str):
            raise AppLoadError(f"local.settings.json: Values.{key} must be a string")
        os.environ.setdefault(key, value)
    return values


def resolve(value: Any) -> Any:
    """Replace ``%Name%`` in a binding attribute with the app setting ``Name``.

    Raises
    ------
    AppLoadError
        If the setting is not defined (the Functions host refuses to start likewise).
    """
    if not isinstance(value, str):
        return value

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise AppLoadError(f"binding expression %{name}%: app setting '{name}' is not set")
        return os.environ[name]

    return _SETTING.sub(sub, value)


def import_app(app_dir: Path, module: str = "function_app") -> Any:
    """Import ``function_app.py`` from ``app_dir`` and return its ``app`` object.

    Raises
    ------
    AppLoadError
        If the file or its ``app`` (a ``FunctionApp``/``DFApp``) is missing.
    """
    path = app_dir / f"{module}.py"
    if not path.exists():
        raise AppLoadError(f"--app-dir: no {module}.py in {app_dir}")
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    app = getattr(mod, "app", None)
    if app is None or not hasattr(app, "get_functions"):
        raise AppLoadError(f"{module}.py: defines no 'app' with get_functions()")
    return app


def index_app(app: Any) -> AppIndex:
    """Group the app's functions by trigger, validating every binding.

    Parameters
    ----------
    app : azure.functions.FunctionApp
        The app object (``app.get_functions()`` is the worker's metadata source).

    Returns
    -------
    AppIndex

    Raises
    ------
    AppLoadError
        For an unsupported binding type (the message names it and lists the supported
        ones), entity triggers (not supported yet), or a function without a trigger.
    """
    index = AppIndex()
    for fn in app.get_functions():
        name = fn.get_function_name()
        bindings = [dict(b) for b in fn.get_dict_repr()["bindings"]]
        trigger = None
        client_param = None
        for b in bindings:
            btype = b["type"]
            if btype == "entityTrigger":
                raise AppLoadError(f"function '{name}': entityTrigger (durable entities) is "
                                   "not supported by the local host yet")
            if btype not in SUPPORTED_BINDINGS:
                raise AppLoadError(
                    f"function '{name}': binding type '{btype}' is not supported by the "
                    f"local host; supported: {', '.join(SUPPORTED_BINDINGS)}")
            if btype == "durableClient":
                client_param = b["name"]
            elif btype.endswith("Trigger"):
                trigger = {k: resolve(v) for k, v in b.items()}
        if trigger is None:
            raise AppLoadError(f"function '{name}': has no trigger binding")
        fdef = FunctionDef(name, fn.get_user_function(), trigger, trigger["name"],
                           client_param)
        kind = trigger["type"]
        if kind == "orchestrationTrigger":
            index.orchestrators[trigger.get("orchestration") or name] = fdef
        elif kind == "activityTrigger":
            index.activities[trigger.get("activity") or name] = fdef
        elif kind == "serviceBusTrigger":
            index.service_bus.append(fdef)
        elif kind == "timerTrigger":
            index.timers.append(fdef)
        else:
            index.http.append(fdef)
    return index


def load_app(app_dir: str | Path, module: str = "function_app") -> tuple[Any, AppIndex]:
    """Load settings, import the app and index its functions.

    Parameters
    ----------
    app_dir : str or Path
        The app folder.
    module : str
        Module name of the app file.

    Returns
    -------
    (app, AppIndex)
    """
    app_dir = Path(app_dir).resolve()
    load_local_settings(app_dir)
    app = import_app(app_dir, module)
    return app, index_app(app)
