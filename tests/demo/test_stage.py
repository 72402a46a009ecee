"""The demo's console: a log of a piped run keeps each line whole."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def console_width(**env: str) -> int:
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run([sys.executable, "-c",
                           "import demo.stage; print(demo.stage.console.width)"],
                          cwd=ROOT, env={**base, **env}, capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_a_piped_demo_prints_as_wide_as_the_operator_cli():
    # 80 columns cut "... (10 OrderIDs used by two clients)" and the dashboard's URL in two.
    assert console_width() == 200
    assert console_width(COLUMNS="120") == 120
