"""Load a v1-model app (a folder with ``function.json`` per function; docs/local-host.md).

Mirrors azure-functions-python-worker ``azure_functions_worker/loader.py`` (``load_function``,
``install``); ``AzureWebJobs.<name>.Disabled`` also disables. The result offers
``get_functions()`` like a v2 ``FunctionApp``, so ``index_app`` checks it alike.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from devhost.app.load_errors import AppLoadError, describe_exception, describe_json_error

APP_NAMESPACE = "__app__"
"""The package the worker imports function folders under."""

DEFAULT_SCRIPT_FILE = "__init__.py"
DEFAULT_ENTRY_POINT = "main"
FUNCTION_JSON = "function.json"

BINDING_ALIASES = {"orchestrationClient": "durableClient"}
"""Older binding type names and the name the host implements them under."""


class V1Function:
    """One function folder, with the accessors ``index_app`` reads from a v2 function."""

    def __init__(self, name: str, bindings: list[dict[str, Any]], func: Any) -> None:
        self._name, self._bindings, self._func = name, bindings, func

    def get_function_name(self) -> str:
        """Return the function's name (its folder's name)."""
        return self._name

    def get_dict_repr(self) -> dict[str, Any]:
        """Return the function's metadata: its bindings, as in ``function.json``."""
        return {"bindings": self._bindings}

    def get_user_function(self) -> Any:
        """Return the entry point."""
        return self._func


class V1App:
    """The functions of a v1-model app (``get_functions()`` as a v2 ``FunctionApp``)."""

    def __init__(self, app_dir: Path, functions: list[V1Function]) -> None:
        self.app_dir = app_dir
        self._functions = functions

    def get_functions(self) -> list[V1Function]:
        """Return the app's enabled functions, in folder order."""
        return list(self._functions)


def function_folders(app_dir: Path) -> list[Path]:
    """Return the app's function folders: the subfolders holding a ``function.json``."""
    if not app_dir.is_dir():
        return []
    return sorted(p for p in app_dir.iterdir() if (p / FUNCTION_JSON).is_file())


def is_v1_app(app_dir: Path) -> bool:
    """Tell whether the folder is a v1-model app (a function folder exists)."""
    return bool(function_folders(app_dir))


def install_namespace(app_dir: Path) -> None:
    """Make ``__app__`` a namespace package on the app folder (the worker's ``install``).

    One app per process: modules of another app folder under ``__app__`` are dropped first.
    """
    for name in [n for n in sys.modules if n.startswith(APP_NAMESPACE + ".")]:
        del sys.modules[name]
    spec = importlib.machinery.ModuleSpec(APP_NAMESPACE, None, is_package=True)
    package = importlib.util.module_from_spec(spec)
    package.__path__ = [str(app_dir)]
    sys.modules[APP_NAMESPACE] = package
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))


def _read_function_json(folder: Path, app_dir: Path) -> dict[str, Any]:
    where = f"{folder.name}/{FUNCTION_JSON}"
    try:
        value = json.loads((folder / FUNCTION_JSON).read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise AppLoadError(describe_json_error(exc, where)) from exc
    except (OSError, UnicodeError) as exc:
        raise AppLoadError(f"{where}: cannot be read ({exc})") from exc
    if not isinstance(value, dict) or not isinstance(value.get("bindings", []), list):
        raise AppLoadError(f"{where}: must hold one JSON object with a 'bindings' list")
    return value


def _disabled(name: str, config: dict[str, Any]) -> bool:
    setting = os.environ.get(f"AzureWebJobs.{name}.Disabled", "")
    return config.get("disabled") is True or setting.strip().lower() in ("true", "1")


def _bindings(folder: Path, config: dict[str, Any]) -> list[dict[str, Any]]:
    bindings = []
    for index, binding in enumerate(config.get("bindings") or []):
        if not isinstance(binding, dict) or not isinstance(binding.get("type"), str) \
                or not isinstance(binding.get("name"), str):
            raise AppLoadError(f"{folder.name}/{FUNCTION_JSON}: bindings[{index}] needs a "
                               "string 'type' and 'name'")
        kind = BINDING_ALIASES.get(binding["type"], binding["type"])
        bindings.append(dict(binding, type=kind))
    return bindings


def _load_entry_point(folder: Path, app_dir: Path, config: dict[str, Any]) -> Any:
    name = folder.name
    script = config.get("scriptFile") or DEFAULT_SCRIPT_FILE
    entry_point = config.get("entryPoint") or DEFAULT_ENTRY_POINT
    script_path = (folder / script).resolve()
    try:
        relative = script_path.relative_to(app_dir)
    except ValueError:
        raise AppLoadError(f"{name}/{FUNCTION_JSON}: script path {script} is not relative "
                           f"to the specified directory {folder}") from None
    stem, ext = os.path.splitext(relative.parts[-1])
    if ext != ".py":
        raise AppLoadError(f"{name}/{FUNCTION_JSON}: cannot load function {name}: invalid "
                           f"Python filename {script}")
    if not script_path.is_file():
        raise AppLoadError(f"{name}/{FUNCTION_JSON}: cannot load function {name}: the "
                           f"scriptFile {relative.as_posix()} does not exist")
    parts = [APP_NAMESPACE, *relative.parts[:-1]]
    if stem.lower() != "__init__":
        parts.append(stem)
    try:
        module = importlib.import_module(".".join(parts))
    except Exception as exc:  # noqa: BLE001 - every import failure is the app's error
        raise AppLoadError(describe_exception(exc, app_dir, relative.as_posix())) from exc
    func = getattr(module, entry_point, None)
    if func is None or not callable(func):
        raise AppLoadError(f"{relative.as_posix()}: cannot load function {name}: function "
                           f"{entry_point}() is not present in {relative.as_posix()}")
    return func


def load_v1_app(app_dir: Path) -> V1App:
    """Import every enabled function folder; AppLoadError naming the ``function.json`` or script."""
    app_dir = Path(app_dir).resolve()
    install_namespace(app_dir)
    functions = []
    for folder in function_folders(app_dir):
        config = _read_function_json(folder, app_dir)
        if _disabled(folder.name, config):
            continue
        bindings = _bindings(folder, config)
        functions.append(V1Function(folder.name, bindings,
                                    _load_entry_point(folder, app_dir, config)))
    return V1App(app_dir, functions)
