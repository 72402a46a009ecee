"""Who holds a write lock, as the kernel says (Linux ``/proc/locks``), for the hold limit.

A worker notes a hold in its :class:`sqlitekit.HoldRecord` only after ``flock`` returns,
and that thread may wait for the GIL in between: a worker stopped there holds the lock
with its record saying none, and the record alone never ends it while every other writer
waits. The kernel's lock table has no such gap. :func:`exclusive_flocks` reads it;
:func:`write_lock_paths` tells which of a process's locked files are the ``<database>.lock``
files of :class:`sqlitekit.WriteLock`, so a lock an app's own code takes is never counted.

Elsewhere (macOS, Windows) both return nothing, and the record is the only witness.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

PROC_LOCKS = Path("/proc/locks")


def exclusive_flocks(table: Path = PROC_LOCKS) -> dict[int, set[int]]:
    """Return, per process id, the inode numbers it holds an exclusive ``flock`` on.

    Parameters
    ----------
    table : Path
        The kernel's lock table; lines read ``1: FLOCK  ADVISORY  WRITE <pid>
        <major>:<minor>:<inode> 0 EOF``, a waiter's with ``->`` after the number (skipped).

    Returns
    -------
    dict of int to set of int
        Empty where there is no such table or it cannot be read.
    """
    try:
        text = table.read_text()
    except OSError:
        return {}
    held: defaultdict[int, set[int]] = defaultdict(set)
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1:4] != ["FLOCK", "ADVISORY", "WRITE"]:
            continue  # a waiter ("->"), a POSIX or shared lock, or a line of another form
        try:
            held[int(fields[4])].add(int(fields[5].rsplit(":", 1)[1]))
        except (ValueError, IndexError):
            continue
    return dict(held)


def write_lock_paths(pid: int, inodes: set[int]) -> list[str]:
    """Return the files among process ``pid``'s open ones that are write-lock files.

    A write-lock file is one whose inode is in ``inodes`` and whose name is that of a
    SQLite database plus ``.lock`` (:class:`sqlitekit.WriteLock`); read from
    ``/proc/<pid>/fd``, which a stopped process still shows. Empty if the process is gone
    or not readable.
    """
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return []
    paths = []
    for fd in fds:
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
            inode = os.stat(f"{fd_dir}/{fd}").st_ino
        except OSError:
            continue  # closed meanwhile
        if inode in inodes and target.endswith(".lock") and _is_sqlite(target[:-5]):
            paths.append(target)
    return paths


def _is_sqlite(path: str) -> bool:
    """Tell whether ``path`` is a SQLite database (its header's first 16 bytes)."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
