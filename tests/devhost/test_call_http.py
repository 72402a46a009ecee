"""call_http follows 202 Accepted + Location until the final answer (SPEC D11)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.devhost.conftest import output, start


@pytest.fixture
def async_api():
    calls = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server naming
            calls.append(self.path)
            if len(calls) <= 2:
                self.send_response(202)
                self.send_header("Location", f"/status/{len(calls)}")
                self.send_header("Retry-After", "0")
                self.end_headers()
            else:
                body = b'{"done": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", calls
    server.shutdown()


def test_call_http_polls_202_location_then_returns_200(host, async_api):
    url, calls = async_api
    iid = start(host, "fetch", f"{url}/start")
    host.run_until_idle()
    status, out = output(host, iid)
    assert status == "Completed"
    assert out["statusCode"] == 200
    assert out["content"] == '{"done": true}'
    assert calls == ["/start", "/status/1", "/status/2"]
