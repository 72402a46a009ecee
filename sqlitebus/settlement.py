"""Settlement of peek-locked messages (lock token rules: :mod:`sqlitebus.engine`)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from functools import partial

from azurekit.queues import QueueProperties
from sqlitebus import rows
from sqlitebus.base import EngineBase
from sqlitebus.errors import ServiceBusError
from sqlitebus.models import DEAD_LETTER_SUFFIX
from sqlitebus.schema import MAX_US, OperationTally, from_us, span_us


def _count(tally: OperationTally, row: sqlite3.Row, operation: str) -> None:
    tally.add(row["queue"] + (DEAD_LETTER_SUFFIX if row["dead_letter"] else ""), operation)


class Settlement(EngineBase):
    """Settlement operations, used through :class:`~sqlitebus.engine.ServiceBusEngine`."""

    def complete(self, queue: str, lock_token: str) -> None:
        """Remove a locked message received from ``queue`` (or its dead-letter path).

        Raises MessageLockLostError if the lock expired, was superseded or was settled.
        """
        self._group.run(partial(self._complete, queue, lock_token))

    def _complete(self, queue: str, lock_token: str, conn: sqlite3.Connection) -> None:
        row = self._write_held(conn, queue, lock_token, "DELETE FROM messages")
        _count(self._tally, row, "completes")

    def abandon(self, queue: str, lock_token: str) -> None:
        """Release the lock at once (delivery count kept), as :meth:`complete` takes and raises.

        A message that used up ``maxDeliveryCount`` is dead-lettered right away.
        """
        entity = self._entity(queue, False)
        released = self._group.run(partial(self._abandon, queue, lock_token, entity))
        name, dead_letter, _ = entity
        if released and not dead_letter:
            self._made_receivable(name, 1)

    def _abandon(self, queue: str, lock_token: str,
                 entity: tuple[str, bool, QueueProperties], conn: sqlite3.Connection) -> bool:
        row = self._held(conn, queue, lock_token)
        _count(self._tally, row, "abandons")
        name, dead_letter, props = entity
        released = dead_letter or not rows.apply_broker_rules(
            conn, name, row, props, self._now_us(), check_expiry=False
        )
        if released:
            conn.execute(
                "UPDATE messages SET lock_token = NULL, locked_until_us = NULL,"
                " locked_by = NULL WHERE seq = ?",
                (row["seq"],),
            )
        return released

    def dead_letter(
        self,
        queue: str,
        lock_token: str,
        reason: str | None = None,
        description: str | None = None,
    ) -> None:
        """Move a locked message to ``<queue>/$deadletterqueue`` with a reason and description.

        Raises MessageLockLostError as :meth:`complete`, ServiceBusError from a dead-letter
        subqueue, ValueError for a reason or description that is not a string.
        """
        for field, value in (("reason", reason), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{field}: must be a string or None, got {value!r}")
        self._group.run(partial(self._dead_letter, queue, lock_token, reason, description))

    def _dead_letter(self, queue: str, lock_token: str, reason: str | None,
                     description: str | None, conn: sqlite3.Connection) -> None:
        row = self._held(conn, queue, lock_token)
        if row["dead_letter"]:
            raise ServiceBusError(
                f"queue: {queue!r} is a dead-letter subqueue; its messages cannot be "
                "dead-lettered again (complete or abandon them)"
            )
        rows.move_to_dead_letter(conn, row["queue"], row["seq"], reason, description)
        _count(self._tally, row, "dead_letters")

    def renew_lock(self, queue: str, lock_token: str) -> datetime:
        """Extend a held lock to ``now + lockDuration`` (same token, or MessageLockLostError)."""
        return from_us(self._group.run(partial(self._renew, queue, lock_token)))

    def _renew(self, queue: str, lock_token: str, conn: sqlite3.Connection) -> int:
        self._lock_target(queue, lock_token)  # its errors first, as every settlement's
        _, _, props = self._entity(queue, False)
        until = min(self._now_us() + span_us(props.lock_duration), MAX_US)
        row = self._write_held(conn, queue, lock_token,
                               "UPDATE messages SET locked_until_us = ?", (until,))
        _count(self._tally, row, "lock_renewals")
        return until
