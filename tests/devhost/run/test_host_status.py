"""``GET /admin/host/status``: Initialized while any host process is still starting, then Running.

As the Functions host's ``HostController.GetHostStatus`` (see devhost/http_api/admin_routes.py):
a client that waits for ``Running`` (the demo does) sends no work to a host whose worker
processes are still importing the app.
"""

import os
import subprocess
import sys
import time

import httpx

from devhost.run.host import LocalHost, free_port
from tests.devhost.apps import MY_APP, write_app

SLOW_WORKER_S = 3.0
"""How long the app's import sleeps in a worker process (``devhost worker``) only."""

SLOW_APP = MY_APP + f'''
import sys, time
if "worker" in sys.argv:  # python -m devhost worker ...: the process started second
    time.sleep({SLOW_WORKER_S})
'''


def status(base_url: str) -> dict:
    answer = httpx.get(f"{base_url}/admin/host/status", timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_an_in_process_host_is_initialized_while_serving_http_then_running_then_stopped(
        tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    host = LocalHost(app_dir, tmp_path / "data")
    assert host.state == "Default"
    with host:  # HTTP only: drain mode, no loops yet
        first = status(host.base_url)
        assert first["state"] == "Initialized"
        assert isinstance(first["version"], str) and first["version"]
        assert isinstance(first["processUptime"], int) and first["processUptime"] >= 0
        host.start()
        assert status(host.base_url)["state"] == "Running"
    assert host.state == "Stopped"


def test_the_host_is_initialized_before_its_server_can_answer_a_status_poll(
        tmp_path, monkeypatch):
    import uvicorn

    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    host = LocalHost(app_dir, tmp_path / "data")
    when_serving = []
    serve = uvicorn.Server.run

    def run(server, *args, **kwargs):
        when_serving.append(host.state)
        return serve(server, *args, **kwargs)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    with host:
        assert status(host.base_url)["state"] == "Initialized"
    assert when_serving == ["Initialized"]


def test_a_host_started_not_running_says_running_only_when_marked_and_never_after_a_stop(
        tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": MY_APP})
    host = LocalHost(app_dir, tmp_path / "data")
    try:
        host.start(running=False)
        assert status(host.base_url)["state"] == "Initialized"
        host.mark_running()
        assert status(host.base_url)["state"] == "Running"
    finally:
        host.stop()
    host.mark_running()
    assert host.state == "Stopped"


def test_devhost_start_says_running_only_once_its_worker_process_serves(tmp_path):
    app_dir = write_app(tmp_path / "app", {"function_app.py": SLOW_APP})
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "devhost", "start", "--app-dir", str(app_dir), "--data-dir",
         str(tmp_path / "data"), "--port", str(port), "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    try:
        seen, deadline = [], time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                state = status(base_url)["state"]
            except httpx.HTTPError:  # not listening yet
                time.sleep(0.05)
                continue
            if not seen or seen[-1][0] != state:
                seen.append((state, time.monotonic()))
            if state == "Running":
                break
            time.sleep(0.05)
        assert [s for s, _ in seen] == ["Initialized", "Running"], seen
        # The worker's import sleeps SLOW_WORKER_S; the start process served HTTP before that.
        assert seen[1][1] - seen[0][1] >= SLOW_WORKER_S / 2
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
