"""Reading the repository's JSON catalogues (``infra/queues.json``, ``infra/services.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json_file(path: Path, error: type[ValueError], what: str) -> Any:
    """Return the decoded JSON of ``path``; ``error`` naming the file and ``what`` it holds.

    Raises
    ------
    ValueError
        Of type ``error``, if the file cannot be read or is not valid JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path.name}: cannot read {what}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise error(f"{path.name}: not valid JSON: {exc}") from exc


def default_file(default: Path, error: type[ValueError], what: str) -> Path:
    """Return ``default``, a catalogue beside this checkout, if it exists.

    An installed wheel of the local host ships no catalogue, so a caller outside the
    repository must name the app's own file.

    Raises
    ------
    ValueError
        Of type ``error``, naming the file and what to pass instead, if it does not exist.
    """
    if not default.is_file():
        raise error(f"{default.name}: no {what} file beside this installation ({default}); "
                    f"pass the app's own infra/{default.name} as the path")
    return default
