"""The extra host processes of ``devhost start --workers N``: start, readiness, restart, stop.

Each worker process says it serves by writing one line to a pipe of its own (not to its
stdout, which stays the app's), so ``start`` reports "listening" only once every process
works, and a worker that dies is noticed and replaced, as the Functions host restarts a
dead language worker. On stop, workers get :data:`STOP_GRACE_S` before they are killed;
a killed worker loses nothing (its leases expire).

A worker frozen while it holds a SQLite file's write lock (a SIGSTOP, a debugger, a
suspended container) would stop every host process that writes that file. Each worker
keeps its holds in a record in a shared-memory block this process creates for it
(:mod:`sqlitekit.holds`: run-time state, never on the data disk, so a full disk cannot
fail it), and :meth:`end_stalled` kills one holding a lock past a limit (on Linux also
one the kernel shows holding it before its record says so:
:mod:`sqlitekit.kernel_locks`); the kernel then
frees its lock (``flock``) and SQLite's (the uncommitted transaction rolls back), its
leases expire and a new worker replaces it. That is what Azure does with a frozen
instance: it only loses its leases. The processes split the orchestrations by partition
leases (:mod:`devhost.taskhub.partitions`); ``--processes`` tells each how many start
together, so they start balanced. In the Durable
Task Framework's Azure Storage backend a partition lease not renewed within
``LeaseInterval`` (30 s by default) expires and another worker takes the partition
(Azure/durabletask ``src/DurableTask.AzureStorage/AzureStorageOrchestrationServiceSettings.cs``).
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from sqlitekit.holds import HoldBlock, remove_stale_blocks
from sqlitekit.kernel_locks import holds_write_lock, kernel_view, lock_file_path

log = logging.getLogger("devhost")

STOP_WAIT_S = 30.0
"""How long a stopping host process waits for its running activities; those still running
keep their lease and run again once it expires (``--activity-lease-s``)."""

STOP_GRACE_S = STOP_WAIT_S + 5.0
"""How long a worker may take to stop before it is killed (its own stop allows
:data:`STOP_WAIT_S`)."""

WORKER_OFFSETS_SETTING = "DEVHOST_WORKER_CLOCK_OFFSETS_S"
"""Clock offsets (seconds, comma-separated) of the worker processes, the n-th process
getting the n-th (cycling); each is passed as its ``DEVHOST_CLOCK_OFFSET_S``."""

MAX_KILLED_AT_START = 3
"""Workers killed by a signal during start-up that are replaced before start gives up."""

READY = b"ready\n"
"""What a worker writes to its ready pipe once its loops run."""

LOCK_HOLD_LIMIT_S = 5.0
"""How long a worker may hold a write lock before it is killed (``--lock-hold-limit-s``).

The longest hold measured in ``python -m demo --orders 200`` on 2 cores was 0.89 s, at
load average 46 (docs/local-host.md); a frozen worker now stalls the others about this
long, instead of until it wakes."""


class WorkerStartError(RuntimeError):
    """A worker process exited before it was ready."""


class WorkerProcesses:
    """Run ``count`` worker processes with the arguments ``argv`` (``--ready-fd`` is added).

    Parameters
    ----------
    argv : list of str
        ``python -m devhost worker ...`` without ``--ready-fd``.
    count : int
        How many to keep running.
    hold_records : bool
        Give each worker a :class:`sqlitekit.HoldBlock` (``--hold-record NAME`` is added);
        without one :meth:`end_stalled` has nothing to read.
    clock : callable returning float, optional
        Times how long the kernel has shown a worker holding a lock, in s (tests move it);
        a hold record's start is ``time.monotonic`` of the worker, compared with that.
    """

    def __init__(self, argv: list[str], count: int, hold_records: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.argv = argv
        self._clock = clock
        # pid -> (when the kernel was first seen reporting its write lock, record sequence)
        self._kernel_holds: dict[int, tuple[float, int]] = {}
        self._kernel_view = hold_records and kernel_view()
        if hold_records and sys.platform.startswith("linux") and not self._kernel_view:
            log.warning("/proc is missing or of another PID namespace: a worker stopped "
                        "between taking a write lock and noting it is not ended (only the "
                        "hold records are read)")
        self.procs: list[subprocess.Popen[bytes]] = []
        self._offsets = [o.strip() for o in os.environ.get(WORKER_OFFSETS_SETTING, "")
                         .split(",") if o.strip()]
        self._spawned = 0
        self._ready_fds: dict[int, int] = {}  # pid -> read end of its ready pipe
        self._hold_records = hold_records
        self.hold_blocks: dict[int, HoldBlock] = {}  # pid -> its hold record
        self._longest_ended_s = 0.0  # of the workers whose blocks are gone
        if hold_records:
            remove_stale_blocks()
        for _ in range(count):
            self._spawn()

    def _env(self) -> dict[str, str] | None:
        """Return the next worker's environment: its clock offset, if offsets are set."""
        if not self._offsets:
            return None
        offset = self._offsets[self._spawned % len(self._offsets)]
        self._spawned += 1
        return {**os.environ, "DEVHOST_CLOCK_OFFSET_S": offset}

    def _spawn(self) -> subprocess.Popen[bytes]:
        argv = list(self.argv)
        block = self._hold_block()
        if block is not None:
            argv += ["--hold-record", block.name]
        if os.name != "posix":  # no fd passing: take the worker as ready at once
            proc = subprocess.Popen(argv, env=self._env())
        else:
            read_fd, write_fd = os.pipe()
            try:
                proc = subprocess.Popen([*argv, "--ready-fd", str(write_fd)],
                                        pass_fds=(write_fd,), env=self._env())
            finally:
                os.close(write_fd)
            self._ready_fds[proc.pid] = read_fd
        if block is not None:
            self.hold_blocks[proc.pid] = block
        self.procs.append(proc)
        return proc

    def _hold_block(self) -> HoldBlock | None:
        """Return a new worker's hold block, or None (unsupervised): none wanted, or no memory."""
        if not self._hold_records:
            return None
        try:
            return HoldBlock()
        except OSError as exc:
            log.warning("no shared memory for a worker's hold record (%s); a new worker "
                        "frozen holding a write lock is not ended", exc)
            return None

    def _drop_block(self, pid: int) -> None:
        """Remove an exited worker's hold block, keeping its longest hold."""
        self._kernel_holds.pop(pid, None)
        block = self.hold_blocks.pop(pid, None)
        if block is not None:
            self._longest_ended_s = max(self._longest_ended_s, block.read()[1])
            block.close()

    def end_stalled(self, limit_s: float = LOCK_HOLD_LIMIT_S) -> int:
        """Kill each worker holding a write lock for more than ``limit_s``; return how many.

        Held means its hold record says so, or (Linux) the kernel shows it holding one of
        the write-lock files its record names while the record took and released nothing:
        a worker stopped between ``flock`` and its record (:mod:`sqlitekit.kernel_locks`).
        :meth:`replace_exited` then starts a new one, as after a crash.
        """
        ended = 0
        now = self._clock()  # of the kernel's reports; the records' starts: time.monotonic
        for proc in self.procs:
            block = self.hold_blocks.get(proc.pid)
            if block is None or proc.poll() is not None:
                continue
            reason = self._stalled(proc.pid, block, now, limit_s)
            if reason is None:
                continue
            log.error("worker process %d has held a write lock %s (limit %.1f s, "
                      "--lock-hold-limit-s): killing it; its leases expire and a new worker "
                      "takes over", proc.pid, reason, limit_s)
            proc.kill()
            proc.wait()
            ended += 1
        return ended

    def _stalled(self, pid: int, block: HoldBlock, now: float, limit_s: float) -> str | None:
        """Say how worker ``pid`` has held a write lock past ``limit_s``, or None if it has not.

        By its record's times, or (Linux) by the kernel showing a lock granted through one
        of the write-lock descriptors its record names, with the record's sequence
        unchanged (no hold taken or let go) since the check that first saw it.
        """
        since = block.read()[0]
        if since is not None and (held_s := time.monotonic() - since) > limit_s:
            return f"for {held_s:.1f} s"
        held = [fd for fd, inode in block.lock_files().items()
                if holds_write_lock(pid, fd, inode)] if self._kernel_view else []
        if not held:
            self._kernel_holds.pop(pid, None)
            return None
        sequence = block.sequence()
        seen = self._kernel_holds.get(pid)
        if seen is None or seen[1] != sequence:  # first seen, or it took or let go since
            self._kernel_holds[pid] = (now, sequence)
            return None
        if now - seen[0] <= limit_s:
            return None
        paths = ", ".join(sorted({lock_file_path(pid, fd) for fd in held}))
        return (f"for at least {now - seen[0]:.1f} s (the kernel shows it holding {paths}, "
                f"no hold taken or let go since)")

    def longest_hold_s(self) -> float:
        """Return the longest write-lock hold any worker (this run's) has recorded."""
        return max([self._longest_ended_s, *(b.read()[1] for b in self.hold_blocks.values())])

    def wait_ready(self, stop: threading.Event, timeout_s: float = 300.0,
                   lock_hold_limit_s: float = LOCK_HOLD_LIMIT_S) -> bool:
        """Wait until every worker is ready, or ``stop`` is set.

        A worker frozen during start-up while it holds a write lock past
        ``lock_hold_limit_s`` is ended as after start-up (:meth:`end_stalled`) and replaced.

        Returns
        -------
        bool
            True when all are ready; False if ``stop`` was set first.

        Raises
        ------
        WorkerStartError
            If a worker exits (or closes its pipe) before it is ready, or ``timeout_s``
            passes. A worker killed by a signal is replaced instead, up to
            :data:`MAX_KILLED_AT_START` times.
        """
        deadline = time.monotonic() + timeout_s
        killed = 0
        while self._ready_fds:
            if stop.is_set():
                return False
            if time.monotonic() > deadline:
                raise WorkerStartError(f"worker processes not ready after {timeout_s:.0f} s")
            self.end_stalled(lock_hold_limit_s)
            readable, _, _ = select.select(list(self._ready_fds.values()), [], [], 0.2)
            for pid, fd in list(self._ready_fds.items()):
                if fd not in readable:
                    continue
                line = os.read(fd, len(READY))
                os.close(fd)
                del self._ready_fds[pid]
                if line != READY:
                    proc = next(p for p in self.procs if p.pid == pid)
                    code = proc.wait()
                    if code >= 0 or killed >= MAX_KILLED_AT_START:
                        raise WorkerStartError(f"a worker process exited during start-up "
                                               f"(exit code {code}); see its log above")
                    # Killed by a signal (SIGKILL, the OOM killer): not the app's fault.
                    killed += 1
                    log.warning("worker process %d was killed by signal %d during start-up;"
                                " starting a new one", pid, -code)
                    self.procs.remove(proc)
                    self._drop_block(pid)
                    self._spawn()
        return True

    def replace_exited(self) -> int:
        """Start a new worker for each one that exited; return how many were replaced."""
        replaced = 0
        for proc in list(self.procs):
            code = proc.poll()
            if code is None:
                continue
            log.warning("worker process %d exited (code %s); starting a new one",
                        proc.pid, code)
            self.procs.remove(proc)
            fd = self._ready_fds.pop(proc.pid, None)
            if fd is not None:
                os.close(fd)
            self._drop_block(proc.pid)
            self._spawn()
            replaced += 1
        return replaced

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Ask every worker to stop (SIGTERM); kill those still running after ``grace_s``."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + grace_s
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker process %d did not stop in %.0f s; killing it",
                            proc.pid, grace_s)
                proc.kill()
                proc.wait()
        for fd in self._ready_fds.values():
            os.close(fd)
        self._ready_fds.clear()
        for pid in list(self.hold_blocks):
            self._drop_block(pid)


def signal_ready(fd: int | None) -> None:
    """In a worker: tell ``start`` this process serves (no-op without a ready pipe)."""
    if fd is None:
        return
    os.write(fd, READY)
    os.close(fd)


def worker_argv(app_dir: str, data_dir: str, api_url: str, activity_workers: int,
                orchestration_lease_s: float, activity_lease_s: float) -> list[str]:
    """Return the command line of one worker process."""
    return [sys.executable, "-m", "devhost", "worker", "--app-dir", app_dir, "--data-dir",
            data_dir, "--api-url", api_url, "--activity-workers", str(activity_workers),
            "--orchestration-lease-s", str(orchestration_lease_s),
            "--activity-lease-s", str(activity_lease_s)]
