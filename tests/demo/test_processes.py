"""The demo's readiness probe of the local host: ready only once the host says Running."""

import httpx
import pytest

from demo.processes import host_running

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
