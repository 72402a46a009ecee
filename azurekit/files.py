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
