"""Settlement of peek-locked messages: complete, abandon, dead-letter, renew lock.

A lock token is valid only while its lock is held: after expiry, redelivery (new token)
or settlement, every operation with it raises :class:`MessageLockLostError`, as the Azure
SDK does. Each operation is one IMMEDIATE transaction.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from sqlitebus import rows
from sqlitebus.base import EngineBase
from sqlitebus.errors import ServiceBusError
from sqlitebus.models import DEAD_LETTER_SUFFIX
from sqlitebus.schema import MAX_US, count_operation, from_us, span_us
from sqlitekit import write


def _count(conn: sqlite3.Connection, row: sqlite3.Row, operation: str) -> None:
    """Count one settlement of ``row`` under its queue (or its dead-letter path)."""
    queue = row["queue"] + (DEAD_LETTER_SUFFIX if row["dead_letter"] else "")
    count_operation(conn, queue, operation)


class Settlement(EngineBase):
    """Settlement operations, used through :class:`~sqlitebus.engine.ServiceBusEngine`."""

    def complete(self, queue: str, lock_token: str) -> None:
        """Remove a locked message: processing succeeded.

        Parameters
        ----------
        queue : str
            The entity it was received from (queue or dead-letter path).
        lock_token : str
            From :meth:`receive`.

        Raises
        ------
        MessageLockLostError
            If the lock expired, was superseded by a redelivery, or was already settled.
        """
        with self._lock, write(self._conn) as conn:
            row = self._held(conn, queue, lock_token)
            conn.execute("DELETE FROM messages WHERE seq = ?", (row["seq"],))
            _count(conn, row, "completes")

    def abandon(self, queue: str, lock_token: str) -> None:
        """Release the lock so the message can be received again at once.

        The delivery count stays incremented; a message that has used up
        ``maxDeliveryCount`` deliveries goes to the dead-letter subqueue right away.
        Takes ``queue`` and ``lock_token`` as :meth:`complete` does, and raises
        :class:`MessageLockLostError` as it does.
        """
        with self._lock, write(self._conn) as conn:
            row = self._held(conn, queue, lock_token)
            _count(conn, row, "abandons")
            name, dead_letter, props = self._entity(queue, False)
            released = dead_letter or not rows.apply_broker_rules(
                conn, name, row, props, self._now_us(), check_expiry=False
            )
            if released:
                conn.execute(
                    "UPDATE messages SET lock_token = NULL, locked_until_us = NULL,"
                    " locked_by = NULL WHERE seq = ?",
                    (row["seq"],),
                )
        if released and not dead_letter:
            self._made_receivable(name, 1)

    def dead_letter(
        self,
        queue: str,
        lock_token: str,
        reason: str | None = None,
        description: str | None = None,
    ) -> None:
        """Move a locked message to ``<queue>/$deadletterqueue`` with a reason.

        Parameters
        ----------
        queue : str
            The queue it was received from.
        lock_token : str
            From :meth:`receive`.
        reason : str, optional
            Stored as ``DeadLetterReason``.
        description : str, optional
            Stored as ``DeadLetterErrorDescription``.

        Raises
        ------
        MessageLockLostError
            If the lock is no longer held (see :meth:`complete`).
        ServiceBusError
            If the message was received from a dead-letter subqueue already.
        ValueError
            If ``reason`` or ``description`` is not a string.
        """
        for field, value in (("reason", reason), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{field}: must be a string or None, got {value!r}")
        with self._lock, write(self._conn) as conn:
            row = self._held(conn, queue, lock_token)
            if row["dead_letter"]:
                raise ServiceBusError(
                    f"queue: {queue!r} is a dead-letter subqueue; its messages cannot be "
                    "dead-lettered again (complete or abandon them)"
                )
            rows.move_to_dead_letter(conn, row["queue"], row["seq"], reason, description)
            _count(conn, row, "dead_letters")

    def renew_lock(self, queue: str, lock_token: str) -> datetime:
        """Extend a held lock to ``now + lockDuration``; the token stays the same.

        Takes ``queue`` and ``lock_token`` as :meth:`complete` does; returns the new
        ``locked_until`` (UTC). Raises :class:`MessageLockLostError` if the lock is no
        longer held: a lock cannot be revived after it expired.
        """
        with self._lock, write(self._conn) as conn:
            row = self._held(conn, queue, lock_token)
            _count(conn, row, "lock_renewals")
            _, _, props = self._entity(queue, False)
            until = min(self._now_us() + span_us(props.lock_duration), MAX_US)
            conn.execute(
                "UPDATE messages SET locked_until_us = ? WHERE seq = ?", (until, row["seq"])
            )
        return from_us(until)
