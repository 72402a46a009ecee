"""raiseEvent on an unknown instance: 404 before the body is read, as the extension does.

``HttpApiHandler.HandleRaiseEventRequestAsync`` looks the instance up and answers 404/410
before it reads ``request.Content``; since the checks moved into one thread-pool call, the
local host reads the whole body first.
"""

import socket
import time
from urllib.parse import urlsplit

import pytest

WEBHOOK = "/runtime/webhooks/durabletask"


@pytest.fixture
def api_path():
    """About HTTP itself (a body not sent yet): over HTTP only."""
    return "http"


def _exchange(base_url: str, head: str, wait_s: float) -> bytes:
    parts = urlsplit(base_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait_s) as sock:
        sock.sendall(head.encode())
        try:
            return sock.recv(4096)
        except TimeoutError:
            return b""


def _head(server, extra: str) -> str:
    host = urlsplit(server.base_url).netloc
    return (f"POST {WEBHOOK}/instances/ghost/raiseEvent/Reply HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 1000\r\n{extra}"
            "Connection: close\r\n\r\n")


@pytest.mark.parametrize("extra", ["", "Expect: 100-continue\r\n"])
def test_unknown_instance_is_404_without_waiting_for_the_body(server, extra):
    started = time.monotonic()
    answer = _exchange(server.base_url, _head(server, extra), wait_s=3.0)
    assert answer.startswith(b"HTTP/1.1 404"), (answer[:40], time.monotonic() - started)
