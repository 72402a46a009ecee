"""The nemesis: faults at random times, combined, from a seed (``python -m demo --nemesis S``).

:func:`plan` draws a :class:`Schedule` from the seed alone: each :class:`Fault` starts at a
time from the run's start and most end (heal) a while later, so faults overlap:

- ``kill``: SIGKILL of the host, one of its worker processes or the simulator (each is
  restarted: the demo restarts the host and the simulator, the host its workers);
- ``pause``: SIGSTOP, then SIGCONT past the lease durations (:data:`PAUSE_S`);
- ``latency``: every answer of a service late past the agents' call timeout, its
  effect performed late (after the caller gave up);
- ``transient``: a burst of transient errors;
- ``black_hole``: a few orders' requests never answered, with or without the effect;
- ``disk_full``: a filler file takes all the free space of the host's data file system
  (a small tmpfs the run mounts there, :func:`mount_small_fs`), freed when it heals.

The host processes' clocks disagree for the whole run by a few seconds each
(``DEVHOST_CLOCK_OFFSET_S``, ``DEVHOST_WORKER_CLOCK_OFFSETS_S``). The simulator's knobs
are the run's base faults plus the network faults in force, posted whole on each change
(docs/simulator.md); when the schedule is over, ``DELETE /_admin/faults`` resets them, so
the run can finish. The schedule is the seed's; how it meets the orders depends on timing.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from demo.processes import Process

TARGETS = ("host", "worker", "simulator")
PAUSE_S = (6.0, 12.0)
"""SIGSTOP lengths: past the demo's orchestration lease (5 s), around its activity lease."""
SKEW_S = 3.0
"""Largest clock offset of a host process, either way."""
FS_SIZE_MB = 64
"""Size of the data file system the run mounts (tmpfs)."""
START_ON_FULL_DISK_S = 20.0
"""How long a process restarted on the full disk is watched for an exit (the disk stays
full meanwhile) before the schedule goes on."""
KINDS = ("kill", "pause", "latency", "transient", "black_hole", "disk_full")


@dataclass(frozen=True)
class Fault:
    """One fault of the schedule: ``kind`` on ``target`` from ``at_s`` for ``for_s``."""

    at_s: float
    kind: str
    target: str = ""
    for_s: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """One line: when, what, on what, for how long."""
        what = f"{self.kind} {self.target}".strip()
        extra = " ".join(f"{k}={v}" for k, v in sorted(self.detail.items()))
        span = f" for {self.for_s:.1f}s" if self.for_s else ""
        return f"t+{self.at_s:6.1f}s {what}{span}{' ' + extra if extra else ''}"


@dataclass
class Schedule:
    """The faults of one run and the host processes' clock offsets."""

    seed: int
    faults: list[Fault]
    host_offset_s: float
    worker_offsets_s: list[float]

    def lines(self) -> list[str]:
        """Return the schedule as printed at the end of the run."""
        skew = (f"nemesis {self.seed}: clocks: host {self.host_offset_s:+.2f}s, workers "
                + ", ".join(f"{o:+.2f}s" for o in self.worker_offsets_s))
        return [skew, *(f"nemesis {self.seed}: {f.describe()}" for f in self.faults)]


def plan(seed: int, keys: Sequence[str], horizon_s: float, *, disk: bool = True) -> Schedule:
    """Draw the schedule of ``seed``: about one fault per 4 s of ``horizon_s``.

    ``keys`` are the run's order keys (black holes pick from them); ``disk`` False leaves
    out ``disk_full`` (no file system of our own).
    """
    rng = random.Random(seed)
    kinds = [k for k in KINDS if disk or k != "disk_full"]
    count = max(len(kinds), int(horizon_s / 4))
    faults = [_draw(rng, rng.choice(kinds) if n >= len(kinds) else kinds[n],
                    rng.uniform(1.0, horizon_s), keys) for n in range(count)]
    return Schedule(seed, sorted(faults, key=lambda f: f.at_s),
                    round(rng.uniform(-SKEW_S, SKEW_S), 2),
                    [round(rng.uniform(-SKEW_S, SKEW_S), 2) for _ in range(3)])


def _draw(rng: random.Random, kind: str, at_s: float, keys: Sequence[str]) -> Fault:
    """One fault of ``kind`` starting at ``at_s``."""
    at_s = round(at_s, 1)
    if kind == "kill":
        return Fault(at_s, kind, rng.choice(TARGETS))
    if kind == "pause":
        return Fault(at_s, kind, rng.choice(TARGETS), round(rng.uniform(*PAUSE_S), 1))
    service = rng.choice(("payment", "shipping"))
    if kind == "latency":
        return Fault(at_s, kind, service, round(rng.uniform(2, 8), 1),
                     {"latency_s": round(rng.uniform(1.5, 4.0), 1)})
    if kind == "transient":
        return Fault(at_s, kind, service, round(rng.uniform(2, 10), 1),
                     {"rate": round(rng.uniform(0.3, 0.9), 2)})
    if kind == "black_hole":
        chosen = rng.sample(list(keys), min(len(keys), rng.randint(1, 4)))
        return Fault(at_s, kind, service, round(rng.uniform(3, 12), 1),
                     {"orders": ",".join(chosen), "effect": rng.random() < 0.5})
    return Fault(at_s, "disk_full", "data", round(rng.uniform(3, 10), 1))


def clock_env(schedule: Schedule) -> dict[str, str]:
    """Return the host's environment for the schedule's clock offsets."""
    return {"DEVHOST_CLOCK_OFFSET_S": str(schedule.host_offset_s),
            "DEVHOST_WORKER_CLOCK_OFFSETS_S": ",".join(map(str, schedule.worker_offsets_s))}


def mount_small_fs(data_dir: Path, size_mb: int = FS_SIZE_MB) -> str | None:
    """Mount a tmpfs of ``size_mb`` on ``data_dir``; return why not, or None once mounted."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs",
                           str(data_dir)], capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or "mount failed")


def unmount(data_dir: Path) -> None:
    """Unmount what :func:`mount_small_fs` mounted (lazily: files may still be open)."""
    subprocess.run(["umount", "-l", str(data_dir)], capture_output=True)


class Nemesis:
    """Apply a schedule to the running processes from a thread of its own.

    Restarts happen in this thread, which lives until :meth:`close`: a child started with
    ``PR_SET_PDEATHSIG`` dies with the thread that started it (demo/clients.py).
    """

    def __init__(self, schedule: Schedule, host: Process, sim: Process, sim_url: str,
                 base_faults: dict[str, Any], data_dir: Path, *, disk: bool,
                 say: Callable[[str], None]) -> None:
        self.schedule, self.host, self.sim, self.sim_url = schedule, host, sim, sim_url
        self.base, self.data_dir, self.disk, self.say = base_faults, data_dir, disk, say
        self.applied: list[str] = []
        self.crashes: list[str] = []
        """The host's or the simulator's exits that nobody caused: each fails the run."""
        self._net: dict[int, Fault] = {}
        self._paused: dict[int, list[int]] = {}
        self._unposted = False
        self._done = threading.Event()
        self._healed = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nemesis", daemon=True)

    def start(self) -> Nemesis:
        """Start applying the schedule, times counted from now."""
        self._thread.start()
        return self

    def finish(self) -> None:
        """End the schedule early (every order is terminal) and heal everything."""
        self._done.set()

    def close(self) -> None:
        """Heal and let the thread end (after the processes are stopped)."""
        self._done.set()
        self._closed.set()
        self._thread.join(timeout=60)

    def wait_healed(self, timeout_s: float) -> bool:
        """Wait until the schedule is over and healed."""
        return self._healed.wait(timeout_s)

    def _run(self) -> None:
        start = time.monotonic()
        events = sorted([(f.at_s, n, "start", f) for n, f in enumerate(self.schedule.faults)]
                        + [(f.at_s + f.for_s, n, "heal", f)
                           for n, f in enumerate(self.schedule.faults) if f.for_s],
                        key=lambda e: (e[0], e[2] == "start"))
        for at_s, n, what, fault in events:
            if self._done.wait(max(0.0, start + at_s - time.monotonic())):
                break
            try:
                self._ensure_up()
                self._repost()
                (self._begin if what == "start" else self._end)(n, fault)
            except Exception as exc:  # noqa: BLE001 - a fault that cannot be applied is said
                self.say(f"nemesis: {what} of {fault.describe()} failed: {exc}")
        self._heal_all()
        self._healed.set()
        self._closed.wait()

    def _begin(self, n: int, fault: Fault) -> None:
        """Start fault ``n``."""
        line = f"t+{fault.at_s:.1f}s {fault.kind} {fault.target}"
        if fault.kind == "kill":
            self._kill(fault.target)
        elif fault.kind == "pause":
            pids = self._pids(fault.target)
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            self._paused[n] = pids
        elif fault.kind == "disk_full":
            if not self.disk:
                self.say("nemesis: disk_full skipped: no file system of the run's own")
                return
            self._fill()
        else:
            self._net[n] = fault
            self._post()
        self.applied.append(line)
        self.say(f"nemesis: {fault.describe()}")

    def _end(self, n: int, fault: Fault) -> None:
        """Heal fault ``n``."""
        if fault.kind == "pause":
            for pid in self._paused.pop(n, []):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
        elif fault.kind == "disk_full":
            self._filler().unlink(missing_ok=True)
        elif self._net.pop(n, None) is not None:
            self._post()

    def _heal_all(self) -> None:
        """SIGCONT every paused process, free the disk, reset the simulator's faults."""
        for n in list(self._paused):
            self._end(n, Fault(0, "pause"))
        self._filler().unlink(missing_ok=True)
        with contextlib.suppress(RuntimeError):
            self._ensure_up()
        self._net.clear()
        for _ in range(30):
            try:
                httpx.delete(f"{self.sim_url}/_admin/faults", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(1)
        self.say("nemesis: schedule over; every fault healed (DELETE /_admin/faults)")

    def _kill(self, target: str) -> None:
        """SIGKILL the target; restart the host or simulator (the host restarts workers)."""
        if target == "worker":
            for pid in self._pids("worker")[:1]:
                os.kill(pid, signal.SIGKILL)
            return
        proc = self.host if target == "host" else self.sim
        proc.kill()
        self._start(proc)
        if target == "simulator":
            self._post()

    def _start(self, proc: Process) -> None:
        """Start ``proc``; one that exits by itself is a crash (:meth:`_ensure_up`)."""
        try:
            if self._filler().exists():
                # On a full disk the host waits for space before it serves: give it time
                # to fail at start-up instead, with the disk still full.
                proc.start(wait=False)
                assert proc.proc is not None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.proc.wait(timeout=START_ON_FULL_DISK_S)
                return
            proc.start(timeout_s=120)
        except RuntimeError as exc:
            if not proc.exited_at_start:
                raise
            self.say(f"nemesis: {proc.name} exited during its start: "
                     f"{str(exc).splitlines()[-1][:200]}")

    def _ensure_up(self) -> None:
        """Record a crash of the host or simulator (it exited by itself) and restart it."""
        for proc in (self.host, self.sim):
            if proc.proc is not None and proc.proc.poll() is not None:
                self.crashes.append(f"{proc.name} exited by itself (exit code "
                                    f"{proc.proc.returncode})")
                self.say(f"nemesis: {self.crashes[-1]}: a crash; starting it again")
                self._start(proc)

    def _pids(self, target: str) -> list[int]:
        """Process ids of the target: the host's own, its workers', or the simulator's."""
        proc = (self.sim if target == "simulator" else self.host).proc
        if proc is None or proc.poll() is not None:
            return []
        if target != "worker":
            return [proc.pid]
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        with contextlib.suppress(OSError):
            return [int(p) for p in children.read_text().split()]
        return []

    def _filler(self) -> Path:
        return self.data_dir / "nemesis-filler"

    def _fill(self) -> None:
        """Write a filler file until the data file system has no space left."""
        fd = os.open(self._filler(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in (1 << 20, 4096, 512):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)

    def _post(self) -> None:
        """Post the base faults with the network faults in force (whole services).

        A simulator that is down or paused gets them when it is back (:meth:`_repost`).
        """
        doc = faults_in_force(self.base, list(self._net.values()))
        try:
            httpx.post(f"{self.sim_url}/_admin/faults", json=doc,
                       timeout=2).raise_for_status()
            self._unposted = False
        except httpx.HTTPError:
            self._unposted = True

    def _repost(self) -> None:
        """Post the faults in force if the last post did not reach the simulator."""
        if self._unposted:
            self._post()


def faults_in_force(base: dict[str, Any], active: Sequence[Fault]) -> dict[str, Any]:
    """Return the simulator document of ``base`` with the ``active`` network faults on top."""
    doc: dict[str, Any] = {"seed": base.get("seed", 0)}
    for service in ("payment", "shipping"):
        knobs = {**base.get("all", {}), **base.get(service, {})}
        knobs.pop("outage_for_s", None)
        for fault in (f for f in active if f.target == service):
            if fault.kind == "latency":
                knobs["latency_s"] = max(knobs.get("latency_s", 0), fault.detail["latency_s"])
            elif fault.kind == "transient":
                knobs["transient_rate"] = max(knobs.get("transient_rate", 0),
                                              fault.detail["rate"])
            elif fault.kind == "black_hole":
                holes = set(knobs.get("black_hole_order_ids", []))
                knobs["black_hole_order_ids"] = sorted(holes | set(
                    fault.detail["orders"].split(",")))
                knobs["black_hole_performs_effect"] = (
                    knobs.get("black_hole_performs_effect", False) or fault.detail["effect"])
                knobs.pop("black_hole_first_n", None)
        doc[service] = knobs
    return doc
