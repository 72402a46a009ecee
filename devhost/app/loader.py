"""Index an app's functions from its own ``get_functions()`` metadata, as the Functions host does.

Also resolves ``%Setting%`` bindings and loads ``local.settings.json`` first (docs/local-host.md).
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

_SETTING = re.compile(r"%([^%]+)%")

T = TypeVar("T")


@dataclass(frozen=True)
class FunctionDef:
    """One function of the app, its ``%Setting%`` expressions resolved.

    ``func`` is the SDK's handler for orchestrators; ``output_param`` names an ``http`` output
    that is not ``$return`` (a v1 ``func.Out``).
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
    """By entity name, lower-cased (entity names are case-insensitive)."""

    def all_functions(self) -> list[FunctionDef]:
        """Return every function of the app."""
        return [*self.orchestrators.values(), *self.activities.values(),
                *self.entities.values(), *self.service_bus, *self.timers, *self.http]


def find_function(functions: dict[str, T], name: str) -> T | None:
    """Look a function up by name ignoring case, or None.

    As azure-functions-durable-extension ``FunctionName.cs`` (``OrdinalIgnoreCase``) compares.
    """
    found = functions.get(name)
    if found is not None or not isinstance(name, str):
        return found
    wanted = name.lower()
    return next((f for key, f in functions.items() if key.lower() == wanted), None)


def load_local_settings(app_dir: Path) -> dict[str, str]:
    """Load ``local.settings.json`` Values into ``os.environ`` (set ones win); AppLoadError."""
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
    """Replace ``%Name%`` with the app setting; AppLoadError if unset, as the Functions host."""
    if not isinstance(value, str):
        return value

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise AppLoadError(f"binding expression %{name}%: app setting '{name}' is not set")
        return os.environ[name]

    return _SETTING.sub(sub, value)


def index_app(app: Any, app_dir: Path | None = None) -> AppIndex:
    """Group the app's functions by trigger, checking every binding and signature.

    Raises AppLoadError for an unsupported binding (listing the supported), no trigger, or
    parameters that do not match the bindings.
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
    """Load settings, import the app and index it; AppLoadError naming the file or setting."""
    app_dir = Path(app_dir).resolve()
    load_local_settings(app_dir)
    app = import_app(app_dir, module)
    return app, index_app(app, app_dir)
