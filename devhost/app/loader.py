"""Discover an app's functions the way the Functions host does: from its own metadata.

The Python worker answers the host's metadata request with the function app's
``get_functions()`` (the app is found as the worker finds it, see
:mod:`devhost.app.discovery`); this module reads the same list, checks each function's
parameters against its bindings as the worker does (:mod:`devhost.app.signature_check`),
resolves ``%Setting%`` binding expressions from the environment, and loads
``local.settings.json`` Values into the environment first, as ``func start`` does. An app
that uses a binding this host cannot run fails at start-up, naming it. A v1-model app
(one folder per function with ``function.json``, :mod:`devhost.app.v1`) offers the same
metadata and goes through the same checks.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from devhost.app.discovery import import_app
from devhost.app.load_errors import AppLoadError, describe_json_error
from devhost.app.signature_check import check_parameters

__all__ = ["SUPPORTED_BINDINGS", "AppIndex", "AppLoadError", "FunctionDef", "find_function",
           "import_app", "index_app", "load_app", "load_local_settings", "resolve"]

SUPPORTED_BINDINGS = ("orchestrationTrigger", "activityTrigger", "entityTrigger",
                      "durableClient", "serviceBusTrigger", "timerTrigger", "httpTrigger",
                      "http")
"""Binding types the local host implements."""

_SETTING = re.compile(r"%([^%]+)%")

T = TypeVar("T")


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
    client_task_hub : str or None
        The ``taskHub`` of that binding (``%Setting%`` resolved), if it names one.
    output_param : str or None
        Parameter name of an ``http`` output binding that is not ``$return`` (a v1
        function sets the response through a ``func.Out`` parameter).
    """

    name: str
    func: Any
    trigger: dict[str, Any]
    trigger_param: str
    client_param: str | None = None
    client_task_hub: str | None = None
    output_param: str | None = None

@dataclass
class AppIndex:
    """The app's functions grouped by trigger type."""

    orchestrators: dict[str, FunctionDef] = field(default_factory=dict)
    activities: dict[str, FunctionDef] = field(default_factory=dict)
    service_bus: list[FunctionDef] = field(default_factory=list)
    timers: list[FunctionDef] = field(default_factory=list)
    http: list[FunctionDef] = field(default_factory=list)
    entities: dict[str, FunctionDef] = field(default_factory=dict)
    """Entity functions by entity name, lower-cased (entity names are case-insensitive)."""

    def all_functions(self) -> list[FunctionDef]:
        """Return every function of the app."""
        return [*self.orchestrators.values(), *self.activities.values(),
                *self.entities.values(), *self.service_bus, *self.timers, *self.http]


def find_function(functions: dict[str, T], name: str) -> T | None:
    """Look a function up by name, ignoring case, as the Durable extension does.

    Host behaviour mirrors azure-functions-durable-extension ``FunctionName.cs``: function
    names are equal when they are equal ignoring case (``StringComparison.OrdinalIgnoreCase``),
    so ``call_activity("Hello")`` runs the activity ``hello`` and starting
    ``DurableFunctionsOrchestrator`` starts ``durablefunctionsorchestrator``.

    Parameters
    ----------
    functions : dict
        Functions by their declared name.
    name : str
        The name asked for.

    Returns
    -------
    The function, or None when no name matches even ignoring case.
    """
    found = functions.get(name)
    if found is not None or not isinstance(name, str):
        return found
    wanted = name.lower()
    return next((f for key, f in functions.items() if key.lower() == wanted), None)


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
        settings = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise AppLoadError(describe_json_error(exc, "local.settings.json")) from exc
    if not isinstance(settings, dict):
        raise AppLoadError("local.settings.json: the file must hold one JSON object")
    values = settings.get("Values", {})
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


def index_app(app: Any, app_dir: Path | None = None) -> AppIndex:
    """Group the app's functions by trigger, validating every binding and signature.

    Parameters
    ----------
    app : azure.functions.FunctionRegister
        The function app (``get_functions()`` is the worker's metadata source).
    app_dir : Path, optional
        The app folder, to name files relative to it in errors.

    Returns
    -------
    AppIndex

    Raises
    ------
    AppLoadError
        For an unsupported binding type (the message names it and lists the supported
        ones), a function without a trigger, or parameters that do not match the
        bindings (:func:`devhost.app.signature_check.check_parameters`).
    """
    index = AppIndex()
    for fn in app.get_functions():
        fdef = _function_def(fn, app_dir)
        name, trigger = fdef.name, fdef.trigger
        kind = trigger["type"]
        if kind == "orchestrationTrigger":
            index.orchestrators[trigger.get("orchestration") or name] = fdef
        elif kind == "activityTrigger":
            index.activities[trigger.get("activity") or name] = fdef
        elif kind == "entityTrigger":
            index.entities[(trigger.get("entityName") or name).lower()] = fdef
        elif kind == "serviceBusTrigger":
            index.service_bus.append(fdef)
        elif kind == "timerTrigger":
            index.timers.append(fdef)
        else:
            index.http.append(fdef)
    return index


def _function_def(fn: Any, app_dir: Path | None) -> FunctionDef:
    name = fn.get_function_name()
    bindings = [{k: resolve(v) for k, v in dict(b).items()}
                for b in fn.get_dict_repr()["bindings"]]
    trigger = None
    client_param = client_hub = output_param = None
    for b in bindings:
        btype = b["type"]
        if btype not in SUPPORTED_BINDINGS:
            raise AppLoadError(
                f"function '{name}': binding type '{btype}' is not supported by the "
                f"local host; supported: {', '.join(SUPPORTED_BINDINGS)}")
        if btype == "durableClient":
            client_param, client_hub = b["name"], b.get("taskHub") or None
        elif btype.endswith("Trigger"):
            trigger = b
        elif btype == "http" and b.get("name") != "$return":
            output_param = b["name"]
    if trigger is None:
        raise AppLoadError(f"function '{name}': has no trigger binding")
    func = fn.get_user_function()
    check_parameters(name, func, [b["name"] for b in bindings], app_dir)
    return FunctionDef(name, func, trigger, trigger["name"], client_param, client_hub,
                       output_param)


def load_app(app_dir: str | Path, module: str | None = None) -> tuple[Any, AppIndex]:
    """Load settings, import the app and index its functions.

    Parameters
    ----------
    app_dir : str or Path
        The app folder.
    module : str, optional
        Module name of the app file; default from the app setting
        ``PYTHON_SCRIPT_FILE_NAME`` (``function_app``), read after ``local.settings.json``.

    Returns
    -------
    (app, AppIndex)

    Raises
    ------
    AppLoadError
        One line naming the file (and line and column) or the setting at fault.
    """
    app_dir = Path(app_dir).resolve()
    load_local_settings(app_dir)
    app = import_app(app_dir, module)
    return app, index_app(app, app_dir)
