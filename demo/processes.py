"""Start and stop the demo's processes: the local host and the simulated services.

Each runs as its own OS process, as it would on a developer's machine, so the demo can
SIGKILL the host mid-run and start it again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from azurekit.services import catalogue
from devhost.run.host import free_port


class Process:
    """A child process with a log file and an HTTP readiness probe.

    Parameters
    ----------
    name : str
        For messages.
    args : list of str
        Arguments after ``python -m``.
    log : Path
        stdout and stderr go here.
    env : dict
        Extra environment variables.
    ready_url : str
        Polled until it answers before :meth:`start` returns.
    ready : callable, optional
        Whether an answer of ``ready_url`` says ready; default: any answer does.
    """

    def __init__(self, name: str, args: list[str], log: Path, env: dict[str, str],
                 ready_url: str, ready: Callable[[httpx.Response], bool] | None = None) -> None:
        self.name, self.args, self.log, self.env, self.ready_url = name, args, log, env, ready_url
        self.ready = ready or (lambda _answer: True)
        self.proc: subprocess.Popen[bytes] | None = None
        self.exited_at_start = False
        """Whether the last :meth:`start` failed because the process exited by itself."""

    def start(self, timeout_s: float = 120.0, *, wait: bool = True) -> None:
        """Start the process and wait until it answers ready (unless ``wait`` is False).

        A process that exits ends the wait at once; ``timeout_s`` bounds only one that hangs
        (long, for a machine loaded by other work).

        Raises
        ------
        RuntimeError
            If it exits or is not ready within ``timeout_s``: which, its last answer, its
            log's tail.
        """
        out = self.log.open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", *self.args], stdout=out,
                                     stderr=subprocess.STDOUT, env={**os.environ, **self.env},
                                     preexec_fn=_die_with_parent)
        if not wait:
            return
        self.exited_at_start = False
        deadline = time.monotonic() + timeout_s
        why = f"no answer of {self.ready_url} in {timeout_s:g} s"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.exited_at_start = True
                why = f"it exited (code {self.proc.returncode})"
                break
            try:
                answer = httpx.get(self.ready_url, timeout=1.0)
                if self.ready(answer):
                    return
                # Answers, but not ready (a host still Initialized): say so if time runs out.
                why = (f"not ready in {timeout_s:g} s; {self.ready_url} last answered "
                       f"{answer.status_code} {answer.text[:200]!r}")
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"{self.name} did not start ({why}); last log lines:\n{tail}")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind (the crash the host must survive)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 20 s."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def _die_with_parent() -> None:
    """In the child: be SIGKILLed when the demo process dies, however it dies (Linux).

    Without this, a demo killed by its caller would leave the host and the simulator
    running with nobody to stop them.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def simulator(data_dir: Path, faults: dict[str, Any], files_dir: Path | None = None,
              retention_days: float | None = None) -> tuple[Process, str]:
    """Prepare the payment and shipping services with the demo's faults.

    Their files (ledger, faults, log) go in ``files_dir``, by default ``data_dir``;
    ``retention_days`` is the simulator's ``--retention-days`` (its default if None).
    """
    data_dir = files_dir or data_dir
    port = free_port()
    config = data_dir / "faults.json"
    config.write_text(json.dumps(faults, indent=2))
    url = f"http://127.0.0.1:{port}"
    proc = Process("simulator", ["simulator", "--port", str(port), "--ledger",
                                 str(data_dir / "ledger.sqlite"), "--config", str(config),
                                 "--trace-store", str(data_dir / "traces.sqlite"),
                                 *(() if retention_days is None
                                   else ("--retention-days", f"{retention_days:.6f}"))],
                   data_dir / "simulator.log", {}, f"{url}/_admin/stats")
    return proc, url


def service_urls(simulator_url: str) -> dict[str, str]:
    """Each remote service's URL setting, pointed at its own path of the simulator.

    Derived from ``infra/services.json``: a service the catalogue adds gets its setting, and
    a wrong URL reaches another service's path and fails instead of working by chance.
    """
    return {spec.url_setting: f"{simulator_url}/{name}"
            for name, spec in catalogue().services.items()}


def host(app_dir: Path, data_dir: Path, env: dict[str, str],
         log_dir: Path | None = None) -> Process:
    """Prepare the local host running ``function_app.py`` (its log in ``log_dir``).

    Ready once ``/admin/host/status`` says ``Running``: every host process serves, so the
    first orders do not meet worker processes still starting. The partition lease (10 s,
    renewed every third) outlasts the nemesis's clock offsets between two processes (up to
    6 s), so no process takes a live partition for an expired one.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    return Process("local host", ["devhost", "start", "--app-dir", str(app_dir), "--data-dir",
                                  str(data_dir), "--port", str(port),
                                  "--orchestration-lease-s", "5", "--activity-lease-s", "10",
                                  "--partition-lease-s", "10"],
                   (log_dir or data_dir) / "host.log", env, f"{url}/admin/host/status",
                   ready=host_running)


def host_running(answer: httpx.Response) -> bool:
    """Whether a ``/admin/host/status`` answer says ``Running`` (the Functions host's states)."""
    if answer.status_code != 200:
        return False
    try:
        body = answer.json()
    except ValueError:  # not JSON: something else answers on that port
        return False
    return isinstance(body, dict) and body.get("state") == "Running"
