"""Find and import a v2 app as the Python worker does (v1: :mod:`devhost.app.v1`).

The rules (script name, one ``FunctionRegister`` under any name): docs/local-host.md.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

from devhost.app.load_errors import AppLoadError, describe_exception
from devhost.app.v1 import is_v1_app, load_v1_app

SCRIPT_FILE_SETTING = "PYTHON_SCRIPT_FILE_NAME"
"""App setting naming the app's script file, as the Python worker reads it."""

DEFAULT_SCRIPT_FILE = "function_app.py"

log = logging.getLogger("devhost")

_VALID_SCRIPT_NAME = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_\-]*\.py$")
"""The worker's rule for script file names (``validate_script_file_name``)."""


def script_file_name(environ: dict[str, str] | None = None) -> str:
    """Return ``PYTHON_SCRIPT_FILE_NAME`` (default ``function_app.py``); AppLoadError if invalid."""
    env = os.environ if environ is None else environ
    name = env.get(SCRIPT_FILE_SETTING) or DEFAULT_SCRIPT_FILE
    if not _VALID_SCRIPT_NAME.match(name):
        raise AppLoadError(f"{SCRIPT_FILE_SETTING}: Invalid file name: {name} (a letter, "
                           "digit or '_', then letters, digits, '_' or '-', ending in .py)")
    return name


def import_script(app_dir: Path, script: str) -> Any:
    """Execute the script afresh as module ``<stem>``, the app folder on ``sys.path``.

    Raises AppLoadError if it is missing or its import raises (one ``file:line:col`` line).
    """
    path = app_dir / script
    if not path.is_file():
        hint = "" if script == DEFAULT_SCRIPT_FILE else f" ({SCRIPT_FILE_SETTING}={script})"
        raise AppLoadError(f"--app-dir: no {script} in {app_dir}{hint}, and no function "
                           "folder (a folder with a function.json, the v1 model)")
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))
    warn_shadowed_packages(app_dir)
    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - every import failure is the app's error
        sys.modules.pop(module_name, None)
        raise AppLoadError(describe_exception(exc, app_dir, script)) from exc
    return module


def warn_shadowed_packages(app_dir: Path) -> list[str]:
    """Warn of each package of the app folder that is already imported from elsewhere.

    The host's own packages (``azurekit``, ``clocks``, ...) are imported before the app, so an
    app folder with its own copy runs with the host's; returns the names warned of.
    """
    shadowed = []
    for folder in sorted(p for p in app_dir.iterdir() if (p / "__init__.py").is_file()):
        loaded = getattr(sys.modules.get(folder.name), "__file__", None)
        if loaded and not Path(loaded).resolve().is_relative_to(folder.resolve()):
            log.warning("the app's package %s/ is not the one in use: %s was imported from %s "
                        "before the app (install the app's copy or the host's, not both; "
                        "docs/local-host.md)", folder.name, folder.name, Path(loaded).parent)
            shadowed.append(folder.name)
    return shadowed


def find_function_app(module: Any, script: str) -> Any:
    """Return the module's one top-level ``FunctionRegister`` instance, under any name.

    Raises AppLoadError for none, or two names (even of one object, as the worker refuses).
    """
    from azure.functions import FunctionRegister

    names = [name for name in module.__dir__()
             if isinstance(getattr(module, name, None), FunctionRegister)]
    if not names:
        raise AppLoadError(f"{script}: Could not find top level function app instances in "
                           f"{script} (define one, e.g. app = func.FunctionApp() or "
                           "df.DFApp())")
    if len(names) > 1:
        kind = type(getattr(module, names[0])).__name__
        raise AppLoadError(f"{script}: More than one {kind} or other top level function app "
                           f"instances are defined: {', '.join(names)}")
    return getattr(module, names[0])


def import_app(app_dir: Path, module: str | None = None) -> Any:
    """Import the v2 script, else a v1 folder app; AppLoadError as the functions above raise it."""
    script = f"{module}.py" if module else script_file_name()
    app_dir = Path(app_dir)
    if not (app_dir / script).is_file() and is_v1_app(app_dir):
        # No v2 script but function folders: the v1 model (devhost.app.v1).
        return load_v1_app(app_dir)
    return find_function_app(import_script(app_dir, script), script)
