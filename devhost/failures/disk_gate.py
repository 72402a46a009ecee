"""Stop taking work while the data disk is full; take it again once space returns.

SQLite refuses a write on a full disk (SQLITE_FULL, or SQLITE_IOERR for its journal) and
rolls its transaction back, so nothing is half-written; but a host that went on claiming
work would fail every claim, log each failure, and spend messages' delivery counts. The
first such error closes the :class:`DiskGate` with one line in the log; the host's loops
then wait, and the gate opens again, with one line, once the data folder's file system
has :data:`MIN_FREE_BYTES` free.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqlitekit import is_disk_full

log = logging.getLogger("devhost")

MIN_FREE_BYTES = 4 * 1024 * 1024
"""Free space at which a closed gate opens again."""
CHECK_EVERY_S = 0.5
"""How often a closed gate looks at the free space."""


class DiskGate:
    """Whether this process takes work, closed while its data disk is full.

    Parameters
    ----------
    data_dir : Path
        The folder of the SQLite files.
    free_bytes : callable, optional
        Returns the free bytes of ``data_dir``'s file system (tests pass their own).
    """

    def __init__(self, data_dir: Path,
                 free_bytes: Callable[[Path], int] | None = None) -> None:
        self.data_dir = data_dir
        self._free_bytes = free_bytes or _free_bytes
        self._closed_by: str | None = None
        self._checked = 0.0
        self._lock = threading.Lock()

    def saw(self, exc: BaseException) -> bool:
        """Close the gate if ``exc`` says the disk is full; return whether it is closed.

        A failure while the disk has no space left counts too: a function that failed
        over HTTP (the host's API could not write) carries no SQLite error of its own.
        """
        if not is_disk_full(exc) and self._free() >= MIN_FREE_BYTES:
            return False
        with self._lock:
            if self._closed_by is None:
                self._closed_by = str(exc)
                self._checked = time.monotonic()
                log.error("the data disk is full (%s: %s); this process takes no new work "
                          "until space returns on %s", type(exc).__name__, exc,
                          self.data_dir)
        return True

    def is_open(self) -> bool:
        """Tell whether work may be taken; a closed gate looks at the free space."""
        with self._lock:
            if self._closed_by is None:
                return True
            now = time.monotonic()
            if now - self._checked < CHECK_EVERY_S:
                return False
            self._checked = now
            free = self._free()
            if free < MIN_FREE_BYTES:
                return False
            self._closed_by = None
            log.warning("space is back on the data disk (%d MB free); taking work again",
                        free // (1024 * 1024))
            return True


    def _free(self) -> int:
        """Free bytes of the data file system; 0 when they cannot be read."""
        try:
            return self._free_bytes(self.data_dir)
        except OSError:
            return 0


def _free_bytes(path: Path) -> int:
    """Free bytes of ``path``'s file system for unprivileged writers."""
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize
