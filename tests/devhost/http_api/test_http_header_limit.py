"""A request with megabytes of headers is refused by the parser, not handed to the app (L1).

With h11 uvicorn refused a head over 16 KiB; Kestrel (the Functions host) refuses request
headers over 32 KiB with 431. Under httptools no limit is left: a 50 MB header is buffered,
decoded and passed to the app (over 100 MiB of the host's memory per request).
"""

import socket
from urllib.parse import urlsplit

import pytest


@pytest.fixture
def api_path():
    """About HTTP itself: over HTTP only."""
    return "http"


WEBHOOK = "/runtime/webhooks/durabletask"


def test_a_one_megabyte_header_is_not_served(server):
    parts = urlsplit(server.base_url)
    head = (f"GET {WEBHOOK}/instances/ghost HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"X-Big: {'a' * 1_000_000}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        try:
            sock.sendall(head)
            answer = sock.recv(4096)
        except ConnectionResetError:
            answer = b""
    # 404 is the app's answer for the unknown instance: the header reached the app.
    assert not answer.startswith(b"HTTP/1.1 404"), answer[:40]
