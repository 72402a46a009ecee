"""CPU time and resident memory of the local host's process tree, sampled while it works.

The host is ``devhost start`` and the worker processes it starts; a background thread
samples the whole tree (psutil) every ``interval_s``: the sum of resident set sizes
(peak and a timeline) and each process's own CPU seconds (user + system). CPU is summed
over every process ever seen, at its last sample, so a host that is killed and restarted
mid-run counts both lives (up to one interval of the dead one is missed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil


@dataclass
class HostUsage:
    """What the sampler saw.

    Attributes
    ----------
    cpu_s : dict of int to float
        CPU seconds per process id, at its last sample.
    rss : list of (float, int)
        ``(seconds since start, RSS bytes summed over the tree)`` per sample.
    """

    cpu_s: dict[int, float] = field(default_factory=dict)
    rss: list[tuple[float, int]] = field(default_factory=list)

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of every host process together."""
        return sum(self.cpu_s.values())

    @property
    def peak_rss_bytes(self) -> int:
        """Largest RSS sum of the tree at one sample (0 if never sampled)."""
        return max((b for _, b in self.rss), default=0)

class HostSampler:
    """Samples the process tree rooted at ``root_pid()`` until :meth:`stop`.

    Parameters
    ----------
    root_pid : callable
        Returns the pid of the tree's root now (None: not running), so a restarted host
        is followed.
    interval_s : float
        Seconds between samples.
    """

    def __init__(self, root_pid: Callable[[], int | None], interval_s: float = 0.2) -> None:
        self._root_pid = root_pid
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="host-sampler", daemon=True)
        self._started = time.monotonic()
        self.usage = HostUsage()

    def start(self) -> HostSampler:
        """Start sampling in a daemon thread; returns self."""
        self._started = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> HostUsage:
        """Take a last sample, stop the thread and return what was seen."""
        self._stop.set()
        self._thread.join()
        self.sample()
        return self.usage

    def sample(self) -> None:
        """Add one sample of the tree (nothing if the root is not running)."""
        pid = self._root_pid()
        if pid is None:
            return
        try:
            root = psutil.Process(pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total = 0
        for proc in tree:
            try:
                with proc.oneshot():
                    cpu = proc.cpu_times()
                    rss = proc.memory_info().rss
            except psutil.Error:
                continue
            self.usage.cpu_s[proc.pid] = cpu.user + cpu.system
            total += rss
        self.usage.rss.append((time.monotonic() - self._started, total))

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample()
