"""Whether a process holds its write lock, as the kernel says (Linux ``/proc``), for the hold limit.

A worker notes a hold in its :class:`sqlitekit.HoldRecord` only after ``flock`` returns,
and that thread may wait for the GIL in between: a worker stopped there holds the lock
with its record saying none, and the record's times alone never end it while every other
writer waits. The kernel has no such gap. The record names the worker's write-lock file
descriptors (:meth:`sqlitekit.HoldRecord.lock_file`), and ``/proc/<pid>/fdinfo/<fd>``
lists the locks granted through exactly that descriptor (a waiter's request is not
among them), so a lock the app's own code takes, on whatever file, is never counted.

Elsewhere (macOS, Windows), or where ``/proc`` shows another PID namespace than this
process's, :func:`kernel_view` is False and the record is the only witness.
"""

from __future__ import annotations

import os
import sys


def kernel_view() -> bool:
    """Tell whether ``/proc`` answers for the processes this process started.

    False off Linux, without ``/proc``, or when ``/proc`` is another PID namespace's
    (``/proc/self`` then names another number than :func:`os.getpid`).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def holds_write_lock(pid: int, fd: int) -> bool:
    """Tell whether process ``pid`` holds a write lock granted through its descriptor ``fd``.

    Reads ``/proc/<pid>/fdinfo/<fd>``: a line ``lock: 1: FLOCK  ADVISORY  WRITE <pid>
    <dev>:<inode> 0 EOF`` per lock granted through that open file (POSIX on NFS, where
    Linux emulates ``flock`` with it). False if the process or the descriptor is gone.
    """
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as info:
            lines = info.read().splitlines()
    except OSError:
        return False
    return any(line.startswith("lock:") and "->" not in line and " WRITE " in line
               for line in lines)


def lock_file_path(pid: int, fd: int) -> str:
    """Return the path of process ``pid``'s descriptor ``fd`` (``fd <n>`` if unreadable)."""
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return f"fd {fd}"
