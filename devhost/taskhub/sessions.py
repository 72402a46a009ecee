"""Host-side sessions: the stored history of an instance kept in memory between its episodes.

Each episode needs the instance's whole history (the SDK replays it, as on Azure), and each
commit appends to it. Reading the history back before every episode is one query per episode
and the largest read of the task hub; so the process that committed an episode keeps the
texts it read and wrote, with where the next event goes, and the next claim of the instance
reuses them when nothing else wrote its history since.

The check is ``instances.history_version``: every write of an instance's history (an episode
commit, a rewind) adds one to it in the same transaction, and the claim returns the row. A
kept session is used only when its execution id and version are the row's, so a commit of
another process (a partition taken over, :mod:`devhost.taskhub.partitions`), a rewind, or a
purge and new start (a new execution id) is read from the file as before. A session is a
cache: losing it (a restart, the capacity reached) costs one read.

DTFx's Azure Storage backend keeps the same kind of cache (the extended sessions of .NET
apps, ``ExtendedSessionsEnabled``); there the SDK skips replay, here it still replays the
whole history: only the host's read is saved.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

CAPACITY = 1000
"""Instances kept at most, least recently used dropped first (a history of the demo's order
workflow is about 15 KB of JSON)."""


@dataclass(frozen=True)
class Session:
    """An instance's stored history as of one version of its row.

    ``texts``: the stored event texts in position order (never changed in place: a later
    version is a new list); ``end``: the position the next event is written at.
    """

    execution_id: str
    version: int
    texts: list[str]
    end: int


class HistorySessions:
    """The sessions of one task hub object, safe for many threads."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._kept: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, instance_id: str, execution_id: str, version: int) -> Session | None:
        """Return the instance's session if it is of this execution and version, else None."""
        with self._lock:
            session = self._kept.get(instance_id)
            if session is None or (session.execution_id, session.version) != (execution_id,
                                                                                version):
                return None
            self._kept.move_to_end(instance_id)
            return session

    def keep(self, instance_id: str, session: Session) -> None:
        """Keep ``session`` as the instance's, dropping the least recently used over capacity."""
        with self._lock:
            self._kept[instance_id] = session
            self._kept.move_to_end(instance_id)
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)

    def forget(self, instance_id: str) -> None:
        """Drop the instance's session (it ended: no episode is expected)."""
        with self._lock:
            self._kept.pop(instance_id, None)

    def clear(self) -> None:
        """Drop every session (a write failed: what is kept may not be what the file holds)."""
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
