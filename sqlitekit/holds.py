"""Write-lock hold records, kept in shared memory so a full data disk cannot fail them.

A process notes in its :class:`HoldRecord` since when it holds a write lock; the process
that started it reads the record to end it when it is frozen holding one (``devhost start
--lock-hold-limit-s``). The supervising process creates one :class:`HoldBlock` per worker
and passes its name; the worker maps it with :func:`attach`. Layout: a sequence number (odd
while a write is under way), the ``time.monotonic()`` at which the oldest hold began (0:
none; on Linux CLOCK_MONOTONIC, the same in every process), the longest hold in s, and the
write-lock files the process has open (a count, then up to :data:`MAX_LOCK_FILES`
descriptors and their inode numbers). A read retries while the sequence is odd or moves
(a seqlock); a record that cannot be read reads as no hold, so it can delay an end but
never cause a wrong one. A hold is noted only after ``flock`` returns; the descriptors let
the supervisor ask the kernel about the gap in between (:mod:`sqlitekit.kernel_locks`).
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import re
import secrets
import struct
import sys
import threading
import time
from typing import Any

Buffer = bytearray | memoryview | mmap.mmap
"""A record's bytes: its own memory, or a shared-memory block mapped in."""

MAX_LOCK_FILES = 32
"""Write-lock files a record names (one per SQLite file a process writes; more go unnamed)."""

_SEQ = struct.Struct("<Q")
_VALUES = struct.Struct("<dd")
_FDS = struct.Struct(f"<I{MAX_LOCK_FILES}i{MAX_LOCK_FILES}Q")
_pack_seq, _pack_values = _SEQ.pack_into, _VALUES.pack_into
_FDS_AT = _SEQ.size + _VALUES.size
RECORD_BYTES = _FDS_AT + _FDS.size
READ_ATTEMPTS = 1000
"""Reads of a record being written before it reads as no hold (the next check reads again)."""

NO_HOLD: tuple[float | None, float] = (None, 0.0)

_PREFIX = "sqlitekit-hold-"  # then the creator's pid: at most 30 characters, as macOS allows
_NAME = re.compile(re.escape(_PREFIX) + r"(\d+)-[0-9a-f]+")
_SHM_DIR = "/dev/shm"


class HoldRecord:
    """A process's write-lock holds, rewritten in ``buf`` on every take and release.

    Parameters
    ----------
    buf : writable buffer of at least ``RECORD_BYTES``, optional
        A shared block from :func:`attach`; default: this process's memory only.
    """

    def __init__(self, buf: Buffer | None = None) -> None:
        self._buf = memoryview(buf if buf is not None else bytearray(RECORD_BYTES))
        self._guard = threading.Lock()
        self._held: dict[int, float] = {}
        self._longest_s = 0.0
        self._lock_files: dict[int, int] = {}  # descriptor -> inode number, in order
        self._seq = (_SEQ.unpack_from(self._buf)[0] + 1) & ~1  # even: no write under way
        self._write(with_fds=True)

    @property
    def longest_s(self) -> float:
        """The longest hold so far."""
        return self._longest_s

    def taken(self, key: int) -> None:
        """Note that the lock ``key`` is held from now."""
        with self._guard:
            held = self._held
            held[key] = time.monotonic()
            # Insertion order is time order (a lock is never taken twice before a release).
            self._write(next(iter(held.values())))

    def released(self, key: int) -> None:
        """Note that the lock ``key`` is free again."""
        with self._guard:
            held = self._held
            since = held.pop(key, None)
            if since is not None:
                hold_s = time.monotonic() - since
                if hold_s > self._longest_s:
                    self._longest_s = hold_s
            self._write(next(iter(held.values()), 0.0))

    def lock_file(self, fd: int, inode: int) -> None:
        """Name ``fd``, an open write-lock file of this process (``inode``), in the record.

        The supervisor asks the kernel whether the process holds a lock through exactly
        these descriptors, on exactly these files (:mod:`sqlitekit.kernel_locks`); past
        :data:`MAX_LOCK_FILES` a file goes unnamed and only the hold times cover it.
        """
        with self._guard:
            files = self._lock_files
            if fd not in files and len(files) < MAX_LOCK_FILES:
                files[fd] = inode
                self._write(with_fds=True)

    def read(self) -> tuple[float | None, float]:
        """Read the record as another process does (see :func:`read_buffer`)."""
        return read_buffer(self._buf)

    def _write(self, oldest: float | None = None, with_fds: bool = False) -> None:
        """Publish ``oldest`` (default: from the holds), and the descriptors, under the seqlock."""
        if oldest is None:
            oldest = min(self._held.values(), default=0.0)
        buf, seq = self._buf, self._seq
        _pack_seq(buf, 0, seq + 1)
        _pack_values(buf, _SEQ.size, oldest, self._longest_s)
        if with_fds:
            files, room = self._lock_files, MAX_LOCK_FILES - len(self._lock_files)
            _FDS.pack_into(buf, _FDS_AT, len(files), *files, *[-1] * room,
                           *files.values(), *[0] * room)
        self._seq = seq = seq + 2
        _pack_seq(buf, 0, seq)


def read_buffer(buf: Buffer | bytes) -> tuple[float | None, float]:
    """Read a record: (monotonic time the oldest hold began or None, longest hold s)."""
    for _ in range(READ_ATTEMPTS):
        before, since, longest, after = _load(buf)
        if before == after and not before & 1:
            if not (math.isfinite(since) and math.isfinite(longest)) or since < 0 \
                    or longest < 0:
                return NO_HOLD
            return (since or None, longest)
    return NO_HOLD


def read_lock_files(buf: Buffer | bytes) -> dict[int, int]:
    """Read the write-lock files a record names: descriptor -> inode number.

    Names are only added, and each write rewrites the earlier ones unchanged, so a record
    whose writer stopped mid-write (its sequence odd for good) still gives the names
    written before: read as they stand, without a descriptor below 0.
    """
    for _ in range(READ_ATTEMPTS):
        before, fields, after = _pass(buf, _FDS, _FDS_AT)
        if before == after and not before & 1:
            break
    count = fields[0]
    if not 0 <= count <= MAX_LOCK_FILES:
        return {}
    fds, inodes = fields[1:1 + count], fields[1 + MAX_LOCK_FILES:1 + MAX_LOCK_FILES + count]
    return {fd: inode for fd, inode in zip(fds, inodes, strict=True) if fd >= 0}


def _load(buf: Buffer | bytes) -> tuple[int, float, float, int]:
    """One pass of the seqlock read of the values: sequence, values, sequence again."""
    before, (since, longest), after = _pass(buf, _VALUES, _SEQ.size)
    return before, since, longest, after


def _pass(buf: Buffer | bytes, layout: struct.Struct, at: int
          ) -> tuple[int, tuple[Any, ...], int]:
    """One pass of the seqlock read: sequence, ``layout``'s fields at ``at``, sequence again."""
    (before,) = _SEQ.unpack_from(buf)
    fields = layout.unpack_from(buf, at)
    (after,) = _SEQ.unpack_from(buf)
    return before, fields, after


class HoldBlock:
    """A shared-memory block for one worker's record; only its creator removes it.

    Its page is allocated and zeroed here, so the worker's writes need no memory the system
    might refuse (a write to an unallocated page of a full tmpfs is a SIGBUS). Python's
    resource tracker is not used: it would be a child process of the host, which a kill
    or freeze meant for a worker could hit. The blocks a SIGKILLed creator leaves (a page
    each) are removed by :func:`remove_stale_blocks`.

    Raises
    ------
    OSError
        If the system has no shared memory to give.
    """

    def __init__(self) -> None:
        while True:
            self.name = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
            try:
                self._map = _create(self.name)
                return
            except FileExistsError:
                continue

    def read(self) -> tuple[float | None, float]:
        """Read the worker's record (see :func:`read_buffer`)."""
        return read_buffer(self._map)

    def lock_files(self) -> dict[int, int]:
        """Return the worker's write-lock files, descriptor -> inode (:func:`read_lock_files`)."""
        return read_lock_files(self._map)

    def sequence(self) -> int:
        """Return the record's sequence number, which every take and release moves.

        Unchanged between two reads: the worker took and let go of no lock in between.
        """
        return int(_SEQ.unpack_from(self._map)[0])

    def close(self) -> None:
        """Unmap and remove the block; a worker that still maps it keeps its page."""
        self._map.close()
        _unlink(self.name)


def _posix_shm() -> Any:
    """Return the C module behind ``SharedMemory`` on POSIX (``shm_open``, ``shm_unlink``)."""
    import _posixshmem  # type: ignore[import-not-found]

    return _posixshmem


def _create(name: str) -> mmap.mmap:
    """Create the block ``name`` (FileExistsError if taken), its page allocated and zeroed."""
    if sys.platform == "win32":  # page-file memory, zeroed; it lives while a handle is open
        return mmap.mmap(-1, RECORD_BYTES, tagname=name)
    fd = _posix_shm().shm_open("/" + name, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode=0o600)
    try:
        os.ftruncate(fd, RECORD_BYTES)
        if hasattr(os, "posix_fallocate"):
            _fallocate(fd)
        block = mmap.mmap(fd, RECORD_BYTES)
        block[:] = bytes(RECORD_BYTES)
        return block
    except BaseException:
        _unlink(name)
        raise
    finally:
        os.close(fd)


def _fallocate(fd: int) -> None:
    """Allocate the block's page; a file system that cannot is left to the zero fill."""
    try:
        os.posix_fallocate(fd, 0, RECORD_BYTES)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
            raise


def _unlink(name: str) -> None:
    if sys.platform == "win32":
        return
    try:
        _posix_shm().shm_unlink("/" + name)
    except FileNotFoundError:
        pass


def remove_stale_blocks() -> int:
    """Remove the blocks whose creator is gone; return how many (Linux lists them only).

    A process of another pid namespace sharing ``/dev/shm`` looks gone: its workers then
    run unsupervised if they attach after this, and nothing else changes.
    """
    try:
        names = os.listdir(_SHM_DIR)
    except OSError:
        return 0
    stale = [n for n in names if (m := _NAME.fullmatch(n)) and not _alive(int(m[1]))]
    for name in stale:
        _unlink(name)
    return len(stale)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def attach(name: str) -> mmap.mmap:
    """Map the :class:`HoldBlock` ``name`` without taking a share in its removal.

    ``SharedMemory(name)`` would register the block with this process's resource tracker,
    which removes it when this process exits, SIGKILL included, under the reader's feet
    (``track=False`` only came in Python 3.13).

    Raises
    ------
    OSError, ValueError
        If there is no such block (POSIX) or it is too small.
    """
    if sys.platform == "win32":  # named blocks live while a handle is open: no tracker
        return mmap.mmap(-1, RECORD_BYTES, tagname=name)
    fd = _posix_shm().shm_open("/" + name, os.O_RDWR, mode=0o600)
    try:
        return mmap.mmap(fd, RECORD_BYTES)
    finally:
        os.close(fd)


def read_hold(name: str) -> tuple[float | None, float]:
    """Read the record in the block ``name``; a missing or unreadable block reads as no hold."""
    try:
        block = attach(name)
    except (OSError, ValueError):
        return NO_HOLD
    try:
        return read_buffer(block)
    finally:
        block.close()
