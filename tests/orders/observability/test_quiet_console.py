"""Metrics never reach the console: a test session ends with its summary (X8).

The exporter used to print to the ``sys.stdout`` of the moment it was built; under pytest
that is the capture of a test, and what the exporter's thread wrote there later was printed
after the session's summary (400 KB of metrics burying the failure list). This runs a small
session in a subprocess whose host exports every 50 ms and reads where its output ends.
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

SESSION = '''
import time

from opentelemetry import metrics

from orders.observability import telemetry
from orders.settings import Settings

DATA = {}


def test_a_host_configures_its_telemetry(tmp_path):
    DATA["dir"] = tmp_path
    telemetry.configure_telemetry(Settings(DEVHOST_DATA_DIR=str(tmp_path),
                                           METRICS_EXPORT_INTERVAL_S=0.05))
    metrics.get_meter("orders").create_counter("orders.submissions").add(1)


def test_periodic_exports_happen_while_later_tests_run():
    path = DATA["dir"] / telemetry.METRICS_FILE
    deadline = time.monotonic() + 30
    while not (path.exists() and len(path.read_text().splitlines()) >= 3):
        assert time.monotonic() < deadline, "no periodic export within 30 s"
        time.sleep(0.05)
'''


def test_a_test_session_ends_with_its_summary_not_with_metrics(tmp_path):
    (tmp_path / "test_session.py").write_text(SESSION, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
         str(tmp_path), str(tmp_path / "test_session.py")],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:]
    assert done.stdout.splitlines()[-1].startswith("2 passed")
    assert "resource_metrics" not in done.stdout + done.stderr
