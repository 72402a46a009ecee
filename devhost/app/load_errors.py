"""Start-up errors, one line at the user's file (``function_app.py:12:5: SyntaxError: ...``)."""

from __future__ import annotations

import json
import traceback
from pathlib import Path


class AppLoadError(Exception):
    """The app or its configuration cannot be loaded; one line naming the file or setting."""


_LIBRARY_PARTS = ("site-packages", "dist-packages")


def display_path(path: str | Path, app_dir: Path) -> str:
    """Return ``path`` relative to ``app_dir`` (POSIX) when inside it, else as given."""
    try:
        return Path(path).resolve().relative_to(app_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def _is_app_file(filename: str, app_dir: Path) -> bool:
    if any(part in _LIBRARY_PARTS for part in Path(filename).parts):
        return False  # a virtual environment inside the app folder is not the app
    try:
        Path(filename).resolve().relative_to(app_dir.resolve())
    except (ValueError, OSError):
        return False
    return True


def describe_exception(exc: BaseException, app_dir: Path, fallback: str) -> str:
    """Return ``file:line:col: Type: msg`` for an exception raised importing the app.

    The place is the deepest frame in ``app_dir`` outside ``site-packages`` (a SyntaxError's own),
    else ``fallback``.
    """
    kind = type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{display_path(exc.filename, app_dir)}:{exc.lineno or 0}:{exc.offset or 0}"
        return f"{where}: {kind}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if _is_app_file(f.filename, app_dir)]
    if not frames:
        return f"{fallback}: {kind}: {exc}"
    frame = frames[-1]
    column = (frame.colno or 0) + 1  # FrameSummary.colno counts from 0
    return f"{display_path(frame.filename, app_dir)}:{frame.lineno}:{column}: {kind}: {exc}"


def describe_json_error(exc: json.JSONDecodeError, name: str) -> str:
    """Return ``name:line:col: not valid JSON: message`` for a JSON syntax error."""
    return f"{name}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
