"""Run the npm Cosmos DB REST server (``@vercel/cosmosdb-server``) on this machine.

The Cosmos DB adapter is tested and benchmarked against this in-memory server: no
emulator, Docker or cloud needed. It is installed by ``npm ci`` from the repository's
``package.json`` (test tooling, never deployed). It binds 127.0.0.1 on a free port chosen
by the OS and serves HTTPS with a self-signed certificate, so clients connect with
``connection_verify=False`` and :data:`EMULATOR_KEY`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

SERVER_PACKAGE = Path("node_modules", "@vercel", "cosmosdb-server")

EMULATOR_KEY = (
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)
"""The Cosmos DB emulator's published well-known key: for local test servers only."""

# The package's own CLI serves without keep-alive ("connection: close" on every answer),
# so each request paid a new TLS handshake (~50 ms per request in the Python SDK).
# This launcher passes keepAlive, and keepAliveTimeout = 0 keeps idle connections open,
# so a pooled connection is never closed under a client that is about to reuse it.
# Port 0: the OS picks a free port and the server prints it: no race between choosing a
# port and binding it.
_LAUNCHER = """
const { createHttpsServer } = require(process.argv[1]);
const server = createHttpsServer({ keepAlive: true });
server.keepAliveTimeout = 0;
server.listen(0, "127.0.0.1", () => {
  const { address, port } = server.address();
  console.log(`Ready to accept HTTPS connections at ${address}:${port}`);
});
"""
_READY = re.compile(r"Ready to accept HTTPS connections at ([\d.]+):(\d+)")


class LocalCosmosUnavailable(RuntimeError):
    """The server cannot be started here; the message says how to fix it."""


def find_server(start: Path | None = None) -> Path:
    """Find the installed server package in ``start`` or one of its parent folders.

    Parameters
    ----------
    start : Path, optional
        Folder to search from; the current folder by default.

    Returns
    -------
    Path
        The ``node_modules/@vercel/cosmosdb-server`` folder.

    Raises
    ------
    LocalCosmosUnavailable
        If it is not installed (run ``npm ci`` in the project root).
    """
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        candidate = folder / SERVER_PACKAGE
        if (candidate / "lib" / "cli.js").is_file():
            return candidate
    raise LocalCosmosUnavailable(
        f"{SERVER_PACKAGE.as_posix()} not found from {start}: run `npm ci` in the project "
        "root (node 20 and npm are needed) to install the local Cosmos DB server"
    )


class LocalCosmosServer:
    """A running ``@vercel/cosmosdb-server``; a context manager that stops it on exit.

    Parameters
    ----------
    start : Path, optional
        Where to look for ``node_modules`` (see :func:`find_server`).
    startup_timeout_s : float
        How long to wait for the server's ready line.

    Attributes
    ----------
    endpoint : str
        ``https://127.0.0.1:<port>`` once started.
    """

    def __init__(self, start: Path | None = None, *, startup_timeout_s: float = 30.0) -> None:
        self._package = find_server(start)
        self._timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None
        self.endpoint = ""

    def start(self) -> str:
        """Start the server and wait until it listens.

        Returns
        -------
        str
            The endpoint URL.

        Raises
        ------
        LocalCosmosUnavailable
            If ``node`` is missing, or the server exits or stays silent past the timeout
            (its output is in the message).
        """
        node = shutil.which("node")
        if node is None:
            raise LocalCosmosUnavailable("node not found on PATH: install node 20 or newer")
        self._log_dir = tempfile.TemporaryDirectory(prefix="cosmosdb-server-")
        log_path = Path(self._log_dir.name, "server.log")
        with log_path.open("wb") as log:
            self._process = subprocess.Popen(
                [node, "-e", _LAUNCHER, str(self._package)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline:
            output = log_path.read_text(errors="replace")
            match = _READY.search(output)
            if match:
                self.endpoint = f"https://{match.group(1)}:{match.group(2)}"
                return self.endpoint
            if self._process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise LocalCosmosUnavailable(
            f"cosmosdb-server did not start within {self._timeout_s} s; output:\n{output}"
        )

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and remove its log."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        if self._log_dir is not None:
            self._log_dir.cleanup()
            self._log_dir = None

    def __enter__(self) -> LocalCosmosServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
