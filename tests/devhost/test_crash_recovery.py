"""SIGKILL of a host process mid-run loses nothing: a restart finishes every instance."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from clocks import SystemClock
from devhost.run.host import free_port
from devhost.taskhub.store import TaskHub
from tests.devhost.conftest import SAMPLE_APP

pytestmark = pytest.mark.slow


def spawn_app(app_dir, data_dir):
    """Start ``devhost start`` for ``app_dir`` with short leases (so a kill recovers fast)."""
    return subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir),
         "--data-dir", str(data_dir), "--port", str(free_port()),
         "--orchestration-lease-s", "1", "--activity-lease-s", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())


def spawn(data_dir):
    return spawn_app(SAMPLE_APP, data_dir)


def wait_for(predicate, timeout_s=90.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def completed(hub):
    return hub.count_by_status().get("Completed", 0)


def kill_mid_run(app_dir, data_dir, progress, total):
    """Start a host, SIGKILL it once ``progress()`` reached 10 of ``total``; return it then."""
    first = spawn_app(app_dir, data_dir)
    try:
        assert wait_for(lambda: progress() >= 10), "host made no progress"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    at_kill = progress()
    assert at_kill < total, "the kill must happen mid-run"
    return at_kill


def restart_until_completed(data_dir, hub, n, app_dir=SAMPLE_APP):
    """Start a fresh host on the task hub and wait until all ``n`` instances completed."""
    host = spawn_app(app_dir, data_dir)
    try:
        assert wait_for(lambda: completed(hub) == n), hub.count_by_status()
    finally:
        host.send_signal(signal.SIGTERM)
        host.wait(timeout=30)


def test_sigkill_mid_run_then_restart_completes_all_50(tmp_path):
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(50):
        hub.create_instance("slow_chain", f"crash-{i:02d}", json.dumps(i))
    kill_mid_run(SAMPLE_APP, tmp_path, lambda: completed(hub), 50)
    restart_until_completed(tmp_path, hub, 50)
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


def test_ctrl_c_stops_every_process_of_a_multi_process_host(tmp_path):
    # Ctrl-C signals the whole process group; the host stops its workers first, then itself.
    hub = TaskHub(tmp_path / "taskhub.sqlite", SystemClock())
    for i in range(20):
        hub.create_instance("slow_chain", f"int-{i:02d}", json.dumps(i))
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(SAMPLE_APP),
         "--data-dir", str(tmp_path), "--port", str(free_port()), "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True)
    try:
        listening = proc.stdout.readline()
        assert "2 processes" in listening, listening
        workers = [int(p) for p in subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()]
        assert len(workers) == 1
        assert wait_for(lambda: completed(hub) >= 2), "host made no progress"
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=40) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    restart_until_completed(tmp_path, hub, 20)  # what was cut short is finished
