"""The demo itself, with the host SIGKILLed mid-way (issue 4 acceptance)."""

import re
import subprocess
import sys

import pytest

from demo.stage import REPO

pytestmark = [pytest.mark.slow(expected_s=25), pytest.mark.timeout(900)]


def test_demo_with_host_killed_midway_ends_all_terminal_without_duplicates(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "demo", "--orders", "80", "--kill-at", "0.4",
         "--data-dir", str(tmp_path), "--timeout-s", "600"],
        cwd=REPO, capture_output=True, text=True, timeout=800)
    assert "host SIGKILLed" in done.stdout, done.stdout[-2000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("summary:")]
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    fields = dict(re.findall(r"(\w+)=([\d.]+)", line[0]))
    assert fields["orders"] == "80"
    assert fields["lost"] == "0" and fields["duplicate_effects"] == "0"
    assert fields["unbalanced"] == "0", done.stdout[-2000:]
    assert fields["stock_unbalanced"] == "0", done.stdout[-2000:]
    assert int(fields["processed"]) + int(fields["error"]) == 80
    assert done.returncode == 0, done.stdout[-2000:]
