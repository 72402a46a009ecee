"""The demo's readiness probe of the local host: ready only once the host says Running."""

import json
import time

import httpx
import pytest

from demo.processes import Process, host_running
from devhost.run.host import free_port

URL = "http://127.0.0.1:7071/admin/host/status"


@pytest.mark.parametrize(("status", "body", "ready"), [
    (200, {"state": "Running", "version": "dev", "processUptime": 1200}, True),
    (200, {"state": "Initialized", "version": "dev", "processUptime": 300}, False),
    (200, {"state": "Stopping"}, False),
    (503, {"state": "Running"}, False),  # an error answer says nothing of the state
    (200, {}, False),
    (200, ["Running"], False),
])
def test_the_host_is_ready_only_when_its_status_says_running(status, body, ready):
    answer = httpx.Response(status, json=body, request=httpx.Request("GET", URL))
    assert host_running(answer) is ready


def test_an_answer_that_is_not_json_is_not_ready():
    answer = httpx.Response(200, text="<html>another server</html>",
                            request=httpx.Request("GET", URL))
    assert host_running(answer) is False


def test_a_host_that_never_says_running_fails_its_start_in_time_saying_what_it_answered(
        tmp_path):
    # A stand-in host that answers Initialized for ever (workers that never come up).
    root = tmp_path / "www"
    (root / "admin" / "host").mkdir(parents=True)
    (root / "admin" / "host" / "status").write_text(json.dumps({"state": "Initialized"}))
    port = free_port()
    proc = Process("local host", ["http.server", "--bind", "127.0.0.1", str(port),
                                  "--directory", str(root)], tmp_path / "host.log", {},
                   f"http://127.0.0.1:{port}/admin/host/status", ready=host_running)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="Initialized") as caught:
        proc.start(timeout_s=3)
    assert time.monotonic() - started < 30
    assert "did not start" in str(caught.value)
    assert proc.proc is not None and proc.proc.poll() is not None  # stopped
