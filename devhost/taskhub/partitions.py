"""Partitions of the task hub's orchestrations, and the leases by which a process owns them.

DTFx's Azure Storage backend (``Azure/durabletask`` ``src/DurableTask.AzureStorage/``, read at
tag ``durabletask.azurestorage-v2.5.0``, released with DTFx 3.4.0) puts each instance in one of
``PartitionCount`` control queues (default 4; host.json
``extensions.durableTask.storageProvider.partitionCount``, 1 to 16): the partition is the
FNV-1a hash of the instance id's UTF-8 bytes modulo the count
(``AzureStorageOrchestrationService.GetControlQueueAsync``, ``Fnv1aHashHelper``). Only the
worker holding a partition's lease runs its orchestrations; activities stay on the one
work-item queue every worker reads. The extension runs the table partition manager
(``UseTablePartitionManagement`` true in ext 3.x): one row per partition with its current
owner, the worker asking for it (``NextOwner``) and when the lease expires
(``Partitioning/TablePartitionManager.cs``). Each worker renews its leases, claims empty or
expired ones, and a worker under its share asks an over-share owner, which lets go of the
partition at its next pass; on shutdown a worker releases everything. ``LeaseInterval`` is 30 s
and ``LeaseRenewInterval``/``LeaseAcquireInterval`` 10 s
(``AzureStorageOrchestrationServiceSettings.cs``).

Here the table is ``partitions`` in the task hub file and :class:`PartitionLeases` is one
process's side of it, run inside that process's work round transaction at most every third of
the lease, so it adds no trip to a round. Between two passes a process looks at the table once
a second (one read, outside any transaction) for a partition asked of it or left free, and
then passes at once: DTFx's manager polls every second while a partition changes hands.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from devhost.taskhub.events import format_time, parse_time

log = logging.getLogger("devhost.partitions")

DEFAULT_PARTITION_COUNT = 4
"""DTFx ``AzureStorageOrchestrationServiceSettings.DefaultPartitionCount``."""

MAX_PARTITION_COUNT = 16
"""The extension's ``AzureStorageOptions.Validate``: ``PartitionCount`` is 1 to 16."""

LOOK_INTERVAL = timedelta(seconds=1)
"""Between passes, how often a process reads whether a partition is asked of it or free
(DTFx's table partition manager polls every second while a partition changes hands)."""

_LOOK = ("SELECT 1 FROM partitions WHERE partition < ? AND ((owner = ? AND next_owner != ?)"
         " OR (owner IS NULL AND (next_owner IS NULL OR next_owner = ?))) LIMIT 1")
"""A partition asked of this process, free, or handed over to it; params: count, owner x3."""


_FNV_OFFSET_BASIS = 2166136261
_FNV_PRIME = 16777619


def fnv1a_32(data: bytes) -> int:
    """Return the 32-bit FNV-1a hash of ``data`` (DTFx ``Fnv1aHashHelper.ComputeHash``).

    Parameters
    ----------
    data : bytes
        The bytes to hash.

    Returns
    -------
    int
        The unsigned 32-bit hash.
    """
    value = _FNV_OFFSET_BASIS
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def instance_hash(instance_id: str) -> int:
    """Return the FNV-1a hash of ``instance_id``'s UTF-8 bytes (stored as ``instances.id_hash``).

    Parameters
    ----------
    instance_id : str
        The instance id.

    Returns
    -------
    int
        The unsigned 32-bit hash; modulo ``partitionCount`` it is the instance's partition.
    """
    return fnv1a_32(instance_id.encode("utf-8"))


def partition_of(instance_id: str, count: int) -> int:
    """Return the partition of ``instance_id`` among ``count``, as DTFx's Azure Storage does.

    The FNV-1a hash of the id's UTF-8 bytes modulo ``count``
    (``AzureStorageOrchestrationService.GetControlQueueAsync``), so an instance lands in the
    partition whose number its control queue ``<hub>-control-NN`` has on Azure.

    Parameters
    ----------
    instance_id : str
        The instance id (an orchestration's; entity ids hash the same way).
    count : int
        The partition count, 1 to :data:`MAX_PARTITION_COUNT`.

    Returns
    -------
    int
        0 to ``count - 1``.
    """
    return instance_hash(instance_id) % count


@dataclass
class _Row:
    partition: int
    owner: str | None
    next_owner: str | None
    expires_at: datetime | None

    def live(self, now: datetime) -> bool:
        return self.owner is not None and self.expires_at is not None and self.expires_at > now


class PartitionLeases:
    """One host process's leases on the task hub's partitions (see the module docstring).

    Parameters
    ----------
    owner : str
        This process's worker id (the ``lock_owner`` of the instances it claims).
    count : int
        ``partitionCount``, 1 to :data:`MAX_PARTITION_COUNT`.
    lease : timedelta
        How long a lease holds unless renewed (DTFx ``LeaseInterval``); it is renewed, and
        free or expired partitions claimed, every third of it (``LeaseRenewInterval``).
    expected : int
        How many processes are starting together (``devhost start --workers``): for the
        first lease period a process claims no more than its share among that many, so they
        start balanced instead of handing partitions over; later only live owners count.

    Raises
    ------
    ValueError
        If ``count`` is out of range or ``lease`` is not positive.
    """

    def __init__(self, owner: str, count: int, lease: timedelta, expected: int = 1) -> None:
        if not 1 <= count <= MAX_PARTITION_COUNT:
            raise ValueError(f"count: partitionCount must be 1 to {MAX_PARTITION_COUNT}, "
                             f"got {count}")
        if lease <= timedelta(0):
            raise ValueError(f"lease: must be positive, got {lease}")
        self.owner = owner
        self.count = count
        self.lease = lease
        self.expected = max(1, expected)
        self.owned: frozenset[int] = frozenset()
        """The partitions whose orchestrations this process claims, as of the last pass."""
        self._next_pass: datetime | None = None
        self._next_look: datetime | None = None
        self._expected_until: datetime | None = None

    def due(self, conn: sqlite3.Connection, now: datetime) -> bool:
        """Tell whether a pass (:meth:`manage`) is due.

        Every third of the lease; sooner when a look (at most every :data:`LOOK_INTERVAL`,
        one read on ``conn`` outside any transaction) finds a partition asked of this process,
        free, or handed over to it.
        """
        if self._next_pass is None or now >= self._next_pass:
            return True
        if self._next_look is not None and now < self._next_look:
            return False
        self._next_look = now + min(LOOK_INTERVAL, self.lease / 3)
        me = self.owner
        return conn.execute(_LOOK, (self.count, me, me, me)).fetchone() is not None

    def claim_filter(self) -> str | None:
        """Return the SQL condition on ``i.id_hash`` limiting claims to owned partitions.

        Plain SQL on the stored hash, no call into Python per row. None when every partition
        is owned (no condition); ``"0"`` (false) when none is.
        """
        if len(self.owned) == self.count:
            return None
        if not self.owned:
            return "0"
        listed = ",".join(str(p) for p in sorted(self.owned))
        return f"i.id_hash % {self.count} IN ({listed})"

    def manage(self, conn: sqlite3.Connection, now: datetime) -> None:
        """Renew, release, claim and ask for partitions; call inside a write transaction.

        Renews this process's leases and lets go of those another process asked for; claims
        empty, expired or handed-over partitions up to its share (the partition count over the
        live owners, rounded up); asks over-share owners for partitions while under the share
        rounded down. A live lease is never taken: its owner releases it. Taking an expired
        lease frees the instances its former owner had claimed in that partition, so a frozen
        or dead owner stalls them no longer than its lease (its late commits are refused).
        """
        rows = self._read(conn)
        me = self.owner
        lost = {r.partition for r in rows if r.partition in self.owned and r.owner != me}
        for p in sorted(lost):
            log.warning("partition %d of the task hub was taken over by another process "
                        "(this process's lease had expired)", p)
        mine = [r for r in rows if r.owner == me]
        for row in mine:
            if row.next_owner is not None and row.next_owner != me:  # asked for: hand it over
                conn.execute("UPDATE partitions SET owner=NULL WHERE partition=?",
                             (row.partition,))
                log.info("partition %d handed over to process %s", row.partition,
                         row.next_owner)
                row.owner = None
        kept = [r.partition for r in mine if r.owner == me]
        workers = len({r.owner for r in rows if r.live(now)} | {
            r.next_owner for r in rows if r.next_owner is not None and r.live(now)} | {me})
        if self._expected_until is None:
            self._expected_until = now + self.lease
        if now < self._expected_until:
            workers = max(workers, self.expected)
        share = -(-self.count // workers)
        for row in rows:
            if len(kept) >= share:
                break
            if row.owner == me or not self._claimable(row, now):
                continue
            self._claim(conn, row, now)
            kept.append(row.partition)
        self._ask(conn, rows, now, kept, self.count // workers)
        expires = format_time(now + self.lease)
        conn.executemany("UPDATE partitions SET expires_at=? WHERE partition=? AND owner=?",
                         [(expires, p, me) for p in kept])
        self.owned = frozenset(kept)
        self._next_pass = now + self.lease / 3
        self._next_look = now + min(LOOK_INTERVAL, self.lease / 3)

    def release_all(self, conn: sqlite3.Connection) -> None:
        """Give up every lease at once (a graceful stop); call inside a write transaction."""
        conn.execute("UPDATE partitions SET owner=NULL, next_owner=NULL, expires_at=NULL"
                     " WHERE owner=?", (self.owner,))
        conn.execute("UPDATE partitions SET next_owner=NULL WHERE next_owner=?", (self.owner,))
        self.owned = frozenset()
        self._next_pass = None

    def _read(self, conn: sqlite3.Connection) -> list[_Row]:
        rows = {r[0]: _Row(r[0], r[1], r[2], parse_time(r[3]) if r[3] else None)
                for r in conn.execute("SELECT partition, owner, next_owner, expires_at"
                                      " FROM partitions WHERE partition < ?", (self.count,))}
        missing = [p for p in range(self.count) if p not in rows]
        if missing:  # a new task hub, or a larger partitionCount
            conn.executemany("INSERT OR IGNORE INTO partitions (partition) VALUES (?)",
                             [(p,) for p in missing])
            rows.update({p: _Row(p, None, None, None) for p in missing})
        return [rows[p] for p in sorted(rows)]

    def _claimable(self, row: _Row, now: datetime) -> bool:
        """Empty, handed over to this process, or expired (DTFx ``TryClaimLease``)."""
        if row.owner is None and row.next_owner in (None, self.owner):
            return True
        return row.expires_at is None or row.expires_at <= now

    def _claim(self, conn: sqlite3.Connection, row: _Row, now: datetime) -> None:
        former = row.owner
        conn.execute("UPDATE partitions SET owner=?, next_owner=NULL, owned_since=?"
                     " WHERE partition=?", (self.owner, format_time(now), row.partition))
        if former is not None and former != self.owner:  # expired: its claims are void
            freed = conn.execute(
                "UPDATE instances SET lock_owner=NULL, lock_expires=NULL WHERE lock_owner=?"
                " AND id_hash % ? = ?",
                (former, self.count, row.partition)).rowcount
            log.warning("partition %d taken over from process %s, whose lease expired at %s "
                        "(%d claimed instances freed)", row.partition, former,
                        format_time(row.expires_at) if row.expires_at else "-", freed)
        else:
            log.info("partition %d acquired", row.partition)
        row.owner, row.next_owner = self.owner, None

    def _ask(self, conn: sqlite3.Connection, rows: list[_Row], now: datetime,
             kept: list[int], floor: int) -> None:
        """Ask over-share owners for partitions until this process would hold ``floor``."""
        asked = sum(1 for r in rows if r.next_owner == self.owner and r.owner != self.owner)
        held: dict[str, int] = {}
        for r in rows:
            if r.live(now) and r.owner is not None and r.owner != self.owner:
                held[r.owner] = held.get(r.owner, 0) + 1
        for row in rows:
            if len(kept) + asked >= floor:
                return
            owner = row.owner
            if owner is None or owner == self.owner or not row.live(now) \
                    or row.next_owner is not None or held.get(owner, 0) <= floor:
                continue
            conn.execute("UPDATE partitions SET next_owner=? WHERE partition=?",
                         (self.owner, row.partition))
            row.next_owner = self.owner
            held[owner] -= 1
            asked += 1
