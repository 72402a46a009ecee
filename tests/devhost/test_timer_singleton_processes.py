"""L2 with real processes: ``devhost start --workers 2`` never overlaps a timer's runs."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devhost.run.host import free_port

pytestmark = [pytest.mark.slow(expected_s=13),
              pytest.mark.skipif(os.name != "posix", reason="worker processes need fd passing")]

APP = '''
import json, os, time
import azure.functions as func

app = func.FunctionApp()


@app.timer_trigger(arg_name="timer", schedule="*/1 * * * * *")
def tick(timer: func.TimerRequest) -> None:
    start = time.time()
    time.sleep(2.5)  # longer than the interval, and than the 1 s lock: renewed meanwhile
    with open(os.environ["TICK_LOG"], "a") as log:
        log.write(json.dumps({"pid": os.getpid(), "start": start, "end": time.time()}) + "\\n")
'''


def runs(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def test_two_processes_run_a_slow_timer_one_run_at_a_time(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "function_app.py").write_text(APP)
    (app / "host.json").write_text(json.dumps({"version": "2.0",
                                               "singleton": {"lockPeriod": "00:00:01"}}))
    (app / "local.settings.json").write_text(json.dumps({"IsEncrypted": False, "Values": {
        "FUNCTIONS_WORKER_RUNTIME": "python"}}))
    log = tmp_path / "ticks.jsonl"
    host = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app), "--data-dir",
         str(tmp_path / "data"), "--port", str(free_port()), "--workers", "2"],
        env={**os.environ, "TICK_LOG": str(log)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90  # start-up of two processes on a busy machine
        while len(runs(log)) < 4:
            assert host.poll() is None, host.stdout.read().decode()[-3000:]
            assert time.monotonic() < deadline, f"only {len(runs(log))} runs recorded"
            time.sleep(0.1)
    finally:
        host.send_signal(signal.SIGTERM)
        out = host.communicate(timeout=60)[0].decode()
    recorded = sorted(runs(log), key=lambda r: r["start"])
    assert len(recorded) >= 4, out[-3000:]
    for before, after in zip(recorded, recorded[1:], strict=False):
        assert after["start"] >= before["end"], f"overlapping runs: {before} {after}"
        # The next run is the next occurrence after the end, not one run per second.
        assert after["start"] - before["end"] < 3.0, (before, after)
    assert "ran past its lock" not in out  # the 1 s lock was renewed during 2.5 s runs
