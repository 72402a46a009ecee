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


def holds_write_lock(pid: int, fd: int, inode: int) -> bool:
    """Tell whether process ``pid`` holds a write lock on ``inode`` through its descriptor ``fd``.

    Reads ``/proc/<pid>/fdinfo/<fd>``: a line ``lock: 1: FLOCK  ADVISORY  WRITE <pid>
    <dev>:<inode> 0 EOF`` per lock granted through that open file (POSIX on NFS, where
    Linux emulates ``flock`` with it); the inode tells the write-lock file from another
    the number may have been reused for. False if the process or the descriptor is gone.
    """
    for fields in _fdinfo(pid, fd):
        if fields[:1] == ["lock:"] and "->" not in fields and "WRITE" in fields \
                and len(fields) >= 4 and fields[-3].rpartition(":")[2] == str(inode):
            return True
    return False


def kernel_inode(fd: int) -> int:
    """Return the inode number the kernel's lock lines give this process's open file ``fd``.

    Read from ``/proc/self/fdinfo/<fd>`` (``ino:``), where a file system's ``stat`` might
    answer another number; else ``os.fstat``. Raises OSError if ``fd`` is not open.
    """
    for fields in _fdinfo("self", fd):
        if fields[:1] == ["ino:"] and len(fields) == 2 and fields[1].isdigit():
            return int(fields[1])
    return os.fstat(fd).st_ino


def _fdinfo(pid: int | str, fd: int) -> list[list[str]]:
    """Return the lines of ``/proc/<pid>/fdinfo/<fd>``, split on blanks; [] if unreadable."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as info:
            return [line.split() for line in info]
    except OSError:
        return []


def lock_file_path(pid: int, fd: int) -> str:
    """Return the path of process ``pid``'s descriptor ``fd`` (``fd <n>`` if unreadable)."""
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return f"fd {fd}"
