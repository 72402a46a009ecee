"""Stop taking work while the data disk is full (docs/local-host.md, "A full data disk")."""

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
    """Whether this process takes work; ``free_bytes(data_dir)`` is injectable for tests."""

    def __init__(self, data_dir: Path,
                 free_bytes: Callable[[Path], int] | None = None) -> None:
        self.data_dir = data_dir
        self._free_bytes = free_bytes or _free_bytes
        self._closed_by: str | None = None
        self._checked = 0.0
        self._lock = threading.Lock()

    def saw(self, exc: BaseException) -> bool:
        """Close the gate on a disk-full ``exc`` (or any while space is short); return if closed."""
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
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize
