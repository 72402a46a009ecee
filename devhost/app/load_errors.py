"""Start-up errors of the local host, each one line pointing at the user's file.

An app that cannot be imported, or a ``host.json`` or ``local.settings.json`` that cannot be
read, stops the start with one line such as ``function_app.py:12:5: SyntaxError: invalid
syntax``; the full traceback is chained to the exception for debug logging only. The host's
own modules never appear in that line: it names the deepest frame of the app's own code.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path


class AppLoadError(Exception):
    """The app or its configuration cannot be loaded, or uses what the host cannot run.

    The message is one line naming the user's file (with line and column where known) or
    the setting at fault; the original exception, if any, is chained as ``__cause__``.
    """


_LIBRARY_PARTS = ("site-packages", "dist-packages")


def display_path(path: str | Path, app_dir: Path) -> str:
    """Return ``path`` relative to the app folder when it is inside it, else as given.

    Parameters
    ----------
    path : str or Path
        A file path (absolute or relative).
    app_dir : Path
        The app folder.

    Returns
    -------
    str
        POSIX-style relative path, or the path unchanged.
    """
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
    """Describe an exception raised while importing the app, as ``file:line:col: Type: msg``.

    Parameters
    ----------
    exc : BaseException
        What importing the app raised.
    app_dir : Path
        The app folder: the location given is the deepest traceback frame in it (outside
        any ``site-packages``), or for a ``SyntaxError`` the file and position it names.
    fallback : str
        File named when no frame is in the app folder (the app's script file).

    Returns
    -------
    str
        One line, such as ``function_app.py:3:1: ModuleNotFoundError: No module named 'x'``.
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
    """Describe a JSON syntax error as ``name:line:col: message``.

    Parameters
    ----------
    exc : json.JSONDecodeError
        The parser's error (line and column count from 1).
    name : str
        The file as the user knows it (``host.json``, ``local.settings.json``).

    Returns
    -------
    str
        One line.
    """
    return f"{name}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
