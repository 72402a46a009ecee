"""Run an ASGI app under uvicorn in a background thread, on a free loopback port.

The socket is bound before the thread starts, so the URL accepts connections at once.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

SHUTDOWN_GRACE_S = 2
"""Seconds uvicorn waits for open requests (e.g. a held black hole) before cancelling them."""


@contextmanager
def serve_in_thread(app: ASGIApp, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` on ``host`` at a free port until the block ends, yielding its base URL.

    Raises
    ------
    RuntimeError
        If the server thread does not stop within the shutdown grace period plus 10 s.
    """
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets whose proto says
    # TCP, and without it every small response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((host, 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_GRACE_S, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=SHUTDOWN_GRACE_S + 10)
        sock.close()
        if thread.is_alive():
            raise RuntimeError(f"uvicorn on port {port} did not stop")
