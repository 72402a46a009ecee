"""Wake the waiting threads of other processes that use the same SQLite file, at once.

A process that waits for work in a shared file (a queue's receivers) *listens*: it binds a
Unix datagram socket and registers it in ``<database>.doorbell/``, one empty file per
listener named as its socket (a random part makes the name unique on the machine), so a
ringer finds the socket from the entry alone, whatever path it opened the file by (the
folder mounted twice). A process that committed work *rings*: one datagram naming the
channel (a queue) to every other listener. A listener's thread hands the channel to its
callback, which wakes that process's waiters; so work made in one process is seen by another
in well under a millisecond instead of at its next poll. The poll stays, as the safety net:
a datagram may be dropped (a full socket buffer), a listener may have died, and a message
becomes receivable without any send when its schedule or its lock runs out.

Linux only (the socket names are in the abstract namespace, so no path length limit and
nothing left on disk but the registry file); elsewhere :class:`Doorbell` does nothing and
waiters find other processes' work by polling, as before. That namespace is the network
namespace's: processes in two of them (containers without the host's network) sharing the
file cannot ring each other, and find each other's work by polling.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("sqlitekit.doorbell")

SUPPORTED = sys.platform.startswith("linux")
"""Whether this platform has the abstract socket namespace the doorbell uses."""

MAX_CHANNEL_BYTES = 1024
"""Longest channel name a ring carries (UTF-8; a Service Bus entity path is at most 260
characters); a longer one is not rung, so its waiters find the work by polling."""

REREAD_PEERS_S = 1.0
"""The registry is read again after this long even if its folder's time did not change
(two listeners registering within one tick of the file system's clock)."""

_serial = itertools.count()

_ADDRESS_PREFIX = b"\0sqlitekit-doorbell-"
"""A listener's socket address: this, then its registry entry's name."""

_bells: weakref.WeakSet[Doorbell] = weakref.WeakSet()
"""Every doorbell of this process, for :func:`_after_fork_in_child`."""


def _after_fork_in_child() -> None:
    """In a child of ``fork``: its doorbells are copies of its parent's, not listeners.

    The copy's name is the parent's, so the child's rings skipped the parent, its close
    unregistered the parent and its listen did nothing; without the parent's thread nothing
    hears the copied socket either. Each is made a doorbell that does not listen yet.
    """
    for bell in list(_bells):
        bell._forget_parent()


class Doorbell:
    """The doorbell of one database file (see the module docstring).

    ``on_ring(channel)`` runs in the listener's thread for each ring from another listener
    or process; it must be quick and must not raise (an exception is logged and dropped).
    """

    def __init__(self, path: str | Path, on_ring: Callable[[str], None]) -> None:
        resolved = Path(path).resolve()
        self._registry = resolved.with_name(resolved.name + ".doorbell")
        self._on_ring = on_ring
        self._lock = threading.Lock()
        self._name: str | None = None  # this listener's registry entry, once listening
        self._listener: socket.socket | None = None
        self._sender: socket.socket | None = None
        self._peers: list[tuple[str, bytes]] = []
        self._peers_mtime = -1
        self._peers_read_at = 0.0
        self._closed = False
        _bells.add(self)

    def _forget_parent(self) -> None:
        # Only the forking thread runs in the child: the lock may be held by a thread left in
        # the parent, so it is made anew; the sockets closed here are this process's copies.
        self._lock = threading.Lock()
        for sock in (self._listener, self._sender):
            if sock is not None:
                sock.close()
        self._name = self._listener = self._sender = None
        self._peers, self._peers_mtime = [], -1

    @staticmethod
    def _address(name: str) -> bytes:
        # From the entry's name alone: not from this process's path to the file, which
        # another process (another mount of the folder) may name otherwise.
        return _ADDRESS_PREFIX + name.encode()

    def listen(self) -> None:
        """Start being rung (idempotent, and not after close); failures are logged, not raised."""
        if not SUPPORTED:
            return
        with self._lock:
            if self._name is not None or self._closed:
                return
            name = f"{os.getpid()}-{next(_serial)}-{secrets.token_hex(8)}"
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                listener.bind(self._address(name))
                self._registry.mkdir(exist_ok=True)
                (self._registry / name).touch()
            except OSError as exc:
                listener.close()
                log.warning("doorbell of %s not listening (%s): other processes' work is "
                            "found by polling", self._registry.parent, exc)
                return
            self._listener, self._name = listener, name
        threading.Thread(target=self._receive, args=(listener,), daemon=True,
                         name="sqlitekit-doorbell").start()

    def _receive(self, listener: socket.socket) -> None:
        while True:
            try:
                data = listener.recv(MAX_CHANNEL_BYTES)
            except OSError:
                return  # closed
            if self._name is None:
                return
            try:
                self._on_ring(data.decode(errors="replace"))  # from any local process
            except Exception:  # noqa: BLE001 - a waiter's bug must not stop the doorbell
                log.exception("doorbell callback failed")

    def ring(self, channel: str) -> None:
        """Tell every other listener of the file that ``channel`` has work; never raises.

        Called after a commit, so nothing may undo it: a ring that cannot be sent is dropped.
        """
        data = channel.encode()
        if not SUPPORTED or len(data) > MAX_CHANNEL_BYTES:
            return
        try:  # the registry unreadable (not a folder, its name too long), no socket left
            peers = self._current_peers()
            if not peers:
                return
            sender = self._sender or self._open_sender()
        except OSError as exc:
            log.debug("doorbell of %s not rung (%s)", self._registry.parent, exc)
            return
        for name, address in peers:
            try:
                sender.sendto(data, address)
            except ConnectionRefusedError:  # no one binds it: the listener died
                with contextlib.suppress(OSError):
                    (self._registry / name).unlink(missing_ok=True)
            except OSError:  # a full buffer (it is busy anyway), or gone: the poll finds it
                pass

    def _open_sender(self) -> socket.socket:
        with self._lock:
            if self._sender is None:
                sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                sender.setblocking(False)
                self._sender = sender
            return self._sender

    def _current_peers(self) -> list[tuple[str, bytes]]:
        """Return the other listeners, read again when the registry changed (REREAD_PEERS_S)."""
        try:
            mtime = os.stat(self._registry).st_mtime_ns
        except FileNotFoundError:
            return []
        now = time.monotonic()
        if mtime != self._peers_mtime or now - self._peers_read_at > REREAD_PEERS_S:
            with self._lock:
                try:
                    names = sorted(os.listdir(self._registry))
                except FileNotFoundError:
                    names = []
                self._peers = [(n, self._address(n)) for n in names if n != self._name]
                self._peers_mtime, self._peers_read_at = mtime, now
        return self._peers

    def close(self) -> None:
        """Stop listening and unregister for good (idempotent); rings already sent are lost.

        A later :meth:`listen` does nothing (the owner is closed).
        """
        with self._lock:
            self._closed = True
            name, listener, self._name, self._listener = self._name, self._listener, None, None
            sender, self._sender = self._sender, None
        if name is not None:
            with contextlib.suppress(OSError):  # the registry is gone or no folder any more
                (self._registry / name).unlink(missing_ok=True)
        if listener is not None:
            try:  # wake the receiving thread, which sees it is closed
                listener.sendto(b"", self._address(name or ""))
            except OSError:
                pass
            listener.close()
        if sender is not None:
            sender.close()


if SUPPORTED:
    os.register_at_fork(after_in_child=_after_fork_in_child)
