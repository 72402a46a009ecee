"""call_http as on Azure: a 202 comes back as it is; durable_http polls portably (D11, L1)."""

import json
import logging
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from devhost.taskhub.events import EventType
from devhost.workers.activities import NO_POLLING_ISSUE
from tests.devhost.conftest import output, start


@pytest.fixture
def async_api():
    """An endpoint that answers 202 (Location: its own URL + /done, Retry-After) twice."""
    calls = []

    class Handler(BaseHTTPRequestHandler):
        def answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            calls.append((self.command, self.path, self.headers.get("X-Trace"),
                          self.rfile.read(length).decode() if length else None))
            if len(calls) <= 2:
                self.send_response(202)
                self.send_header("Location", f"/op/{len(calls)}/done")
                self.send_header("Retry-After", str(len(calls)))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b'{"done": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = answer  # noqa: N815 - http.server naming

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", calls
    server.shutdown()


def http_warnings(caplog):
    return [r for r in caplog.records
            if r.name == "devhost.http" and r.levelno == logging.WARNING]


def test_call_http_returns_the_202_as_azure_does_and_warns_once_per_instance(
        host, async_api, caplog):
    url, calls = async_api
    iid = start(host, "fetch_status", f"{url}/op")
    host.run_until_idle()
    assert output(host, iid) == ("Completed", [202, 202])  # never followed
    assert [path for _, path, _, _ in calls] == ["/op", "/op"]
    [warning] = http_warnings(caplog)
    assert f"instance '{iid}'" in warning.getMessage()
    assert NO_POLLING_ISSUE in warning.getMessage()
    assert "Location: /op/1/done" in warning.getMessage()


def test_the_raw_202_carries_location_and_retry_after(host, async_api):
    url, _ = async_api
    iid = start(host, "fetch", f"{url}/op")
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed" and out["statusCode"] == 202
    headers = {k.lower(): v for k, v in out["headers"].items()}
    assert headers["location"] == "/op/1/done" and headers["retry-after"] == "1"


def test_durable_http_polls_with_durable_timers_until_the_final_answer(
        host, clock, async_api, caplog):
    url, calls = async_api
    iid = start(host, "fetch_polling", {"url": f"{url}/op"})
    t0 = clock.now()
    host.run_until_idle(advance_clock=True)
    status, out = output(host, iid)
    assert status == "Completed"
    assert out["statusCode"] == 200 and json.loads(out["content"]) == {"done": True}
    assert calls == [("POST", "/op", "t1", '{"order": 7}'),
                     ("GET", "/op/1/done", "t1", None),
                     ("GET", "/op/2/done", "t1", None)]
    assert clock.now() - t0 == timedelta(seconds=1 + 2)  # each Retry-After, as a timer
    history = host.taskhub.get_history(iid)
    kinds = [EventType(e["EventType"]).name for e in history]
    assert kinds.count("TimerCreated") == 2 and kinds.count("TimerFired") == 2
    assert [e["Name"] for e in history if e["EventType"] == EventType.TaskScheduled] == \
        ["BuiltIn::HttpActivity"] * 3
    assert len(http_warnings(caplog)) == 1  # the host still says Azure would not poll


def test_durable_http_gives_up_at_its_timeout(host, async_api):
    url, calls = async_api
    iid = start(host, "fetch_polling", {"url": f"{url}/op", "timeout_s": 2})
    host.run_until_idle(advance_clock=True)
    status, out = output(host, iid)
    assert status == "Failed"
    assert f"failed: POST {url}/op: still 202 Accepted after 1 polls" in out
    assert len(calls) == 2  # the second poll (after 2 s more) would pass the 2 s timeout
