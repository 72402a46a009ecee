"""Chain-5 on the Durable Task Python SDK against its in-memory backend in another process.

``python -m bench.peers.durabletask_chain5 --n N`` starts
:mod:`bench.peers.durabletask_backend` as a child process (gRPC on a free local port),
runs a ``TaskHubGrpcWorker`` and a ``TaskHubGrpcClient`` here, schedules N chain-5
orchestrations one after another as fast as ``schedule_new_orchestration`` returns, waits
for each to complete and prints one JSON line (see :mod:`bench.peers.common`).

Configuration: the worker's default ``ConcurrencyOptions`` (100 x CPUs concurrent work
items, CPUs + 4 threads); SDK logging at WARNING (its default handler logs every start and
completion at INFO) and trace spans off, as a production deployment would run.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from importlib.metadata import version
from typing import Any

from durabletask import client, task, worker

from bench.peers.common import STEPS, figures, main, stop_child
from devhost.run.host import free_port


def step(ctx: task.ActivityContext, value: int) -> int:
    return value + 1


def chain5(ctx: task.OrchestrationContext, value: int):
    for _ in range(STEPS):
        value = yield ctx.call_activity(step, input=value)
    return value


def start_backend(port: int, timeout_s: float = 30.0) -> subprocess.Popen[str]:
    """Start the in-memory backend process and wait for its ``ready`` line.

    Raises
    ------
    RuntimeError
        If the process exits before it is ready.
    """
    proc = subprocess.Popen([sys.executable, "-m", "bench.peers.durabletask_backend",
                             "--port", str(port)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("ready"):
        proc.kill()
        raise RuntimeError(f"durabletask backend did not start on port {port}: {line!r}")
    return proc


def run(n: int) -> dict[str, Any]:
    """Schedule ``n`` chain-5 orchestrations, wait for all, return the figures.

    Raises
    ------
    AssertionError
        If an orchestration does not complete with the expected output.
    """
    quiet = logging.getLogger("bench.durabletask")
    quiet.setLevel(logging.WARNING)
    port = free_port()
    backend = start_backend(port)
    address = f"localhost:{port}"
    w = worker.TaskHubGrpcWorker(host_address=address, logger=quiet, emit_trace_spans=False)
    w.add_orchestrator(chain5)
    w.add_activity(step)
    w.start()
    c = client.TaskHubGrpcClient(host_address=address, logger=quiet, emit_trace_spans=False)
    try:
        start = time.perf_counter()
        ids = [c.schedule_new_orchestration(chain5, input=i, instance_id=f"c5-{i:06d}")
               for i in range(n)]
        states = [c.wait_for_orchestration_completion(i, timeout=600) for i in ids]
        elapsed = time.perf_counter() - start
    finally:
        w.stop()
        stop_child(backend)
    wrong = [i for i, s in enumerate(states)
             if s is None or s.runtime_status != client.OrchestrationStatus.COMPLETED
             or s.serialized_output != str(i + STEPS)]
    if wrong:
        raise AssertionError(f"{len(wrong)} orchestrations did not complete with i + 5")
    return figures(n, elapsed, peer="durabletask", version=version("durabletask"),
                   backend="durabletask.testing.InMemoryOrchestrationBackend over gRPC, "
                           "in its own process",
                   worker="TaskHubGrpcWorker, default ConcurrencyOptions",
                   start="TaskHubGrpcClient.schedule_new_orchestration")


if __name__ == "__main__":
    main(run, __doc__)
