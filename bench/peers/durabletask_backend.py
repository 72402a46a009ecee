"""The Durable Task SDK's in-memory backend, served over gRPC in its own process.

``durabletask.testing.InMemoryOrchestrationBackend`` is a full ``TaskHubSidecarService``
gRPC server (the same protocol as the Durable Task sidecar and the Durable Task
Scheduler). Running it here, apart from the worker and the client, is the configuration
the issue names as the SDK's best: the backend's locks and gRPC threads do not share a GIL
with the orchestrator and activity code.

``python -m bench.peers.durabletask_backend --port P`` prints ``ready <address>`` once the
server listens, and serves until its standard input is closed (so it cannot outlive the
benchmark that started it) or it receives SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from durabletask.testing import InMemoryOrchestrationBackend


def main() -> None:
    """Serve the in-memory backend on ``--port`` until stdin closes or SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    backend = InMemoryOrchestrationBackend(port=args.port)
    address = backend.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print(f"ready {address}", flush=True)
    done.wait()
    backend.stop(grace=1.0)


if __name__ == "__main__":
    main()
