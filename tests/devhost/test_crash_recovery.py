"""SIGKILL of a host process mid-run loses nothing: a restart finishes every instance."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from clocks import SystemClock
from devhost.host import free_port
from devhost.taskhub.store import TaskHub
from tests.devhost.conftest import SAMPLE_APP

pytestmark = pytest.mark.slow


def spawn(data_dir):
    return subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(SAMPLE_APP),
         "--data-dir", str(data_dir), "--port", str(free_port()),
         "--orchestration-lease-s", "1", "--activity-lease-s", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())


def wait_for(predicate, timeout_s=90.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def completed(hub):
    return hub.count_by_status().get("Completed", 0)


def test_sigkill_mid_run_then_restart_completes_all_50(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(50):
        hub.create_instance("slow_chain", f"crash-{i:02d}", json.dumps(i))
    first = spawn(tmp_path)
    try:
        assert wait_for(lambda: completed(hub) >= 10), "host made no progress"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    done_at_kill = completed(hub)
    assert done_at_kill < 50, "the kill must happen mid-run"
    second = spawn(tmp_path)
    try:
        assert wait_for(lambda: completed(hub) == 50), hub.count_by_status()
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    for i in range(50):
        inst = hub.get_instance(f"crash-{i:02d}")
        assert json.loads(inst.output) == 2 * (i + i + 1 + i + 2)


def test_two_host_processes_share_one_task_hub(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(40):
        hub.create_instance("slow_chain", f"pair-{i:02d}", json.dumps(i))
    hosts = [spawn(tmp_path), spawn(tmp_path)]
    try:
        assert wait_for(lambda: completed(hub) == 40), hub.count_by_status()
    finally:
        for p in hosts:
            p.send_signal(signal.SIGTERM)
        for p in hosts:
            p.wait(timeout=30)
    for i in range(40):
        assert json.loads(hub.get_instance(f"pair-{i:02d}").output) == 2 * (3 * i + 3)
