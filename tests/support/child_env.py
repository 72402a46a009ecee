"""The environment of a test's child interpreter (``python -c``) that imports the project."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def with_repo_on_path() -> dict[str, str]:
    """Return this process's environment with the repository first on ``PYTHONPATH``.

    A ``python -c`` child runs from wherever the test is, so the project's packages are
    found through ``PYTHONPATH``, not the current folder.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env
