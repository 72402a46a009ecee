"""Adapters of :class:`~client.watch.ReplyReceiver`: the local SQLite engine and Azure.

Imports are lazy: the local one never needs azure-servicebus, the Azure one no SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from client.watch import LockLostError, ReplyMessage

LOCK_OWNER = "client-watch"


class LocalReplyReceiver:
    """Receiver of one reply queue of the local host's engine, created on first use."""

    def __init__(self, engine: Any, queue: str, *, _owns_engine: bool = False) -> None:
        from sqlitebus import MessageLockLostError

        self._engine = engine
        self._queue = queue
        self._lock_lost = MessageLockLostError
        self._owns_engine = _owns_engine

    @classmethod
    def open(cls, data_dir: str | Path, queue: str, *, clock: Any = None) -> LocalReplyReceiver:
        """Open a local host data folder's engine and receive from ``queue``; owns the engine."""
        from sqlitebus import open_engine

        return cls(open_engine(data_dir, clock=clock), queue, _owns_engine=True)

    def receive(self, max_count: int) -> Sequence[ReplyMessage]:
        """Receive up to ``max_count`` messages in peek-lock mode (returns at once)."""
        return [
            ReplyMessage(m.body, m.message_id, m.delivery_count, m.lock_token, m.enqueued_time)
            for m in self._engine.receive(self._queue, max_count, LOCK_OWNER)
        ]

    def complete(self, message: ReplyMessage) -> None:
        """Complete with the lock token; :class:`~client.watch.LockLostError` if lost."""
        try:
            self._engine.complete(self._queue, message.handle)
        except self._lock_lost as exc:
            raise LockLostError(str(exc)) from exc

    def dead_letter(self, message: ReplyMessage, reason: str, description: str) -> None:
        """Dead-letter with ``DeadLetterReason`` / ``DeadLetterErrorDescription``."""
        try:
            self._engine.dead_letter(self._queue, message.handle, reason, description)
        except self._lock_lost as exc:
            raise LockLostError(str(exc)) from exc

    def peek(self, from_sequence_number: int, max_count: int) -> Sequence[ReplyMessage]:
        """Browse up to ``max_count`` messages from ``from_sequence_number`` on, unlocked."""
        return [
            ReplyMessage(m.body, m.message_id, m.delivery_count, None, m.enqueued_time,
                         m.sequence_number)
            for m in self._engine.peek(self._queue, max_count,
                                       from_sequence_number=from_sequence_number)
        ]

    def dead_letter_count(self, queue: str) -> int | None:
        """Return the messages in ``queue``'s dead-letter subqueue (another queue's, too)."""
        return int(self._engine.counts(queue).dead_letter)

    def close(self) -> None:
        """Close the engine if :meth:`open` opened it."""
        if self._owns_engine:
            self._engine.close()


class AzureReplyReceiver:
    """Receiver of one reply queue in Azure Service Bus, identity-based (X10).

    Needs "Azure Service Bus Data Receiver" on the queue. ``max_wait_time_s`` > 0 bounds one
    receive; a ``client`` passed in (tests) is used instead and closed by :meth:`close`.
    Raises ValueError for a namespace that is not a host name or a bad ``max_wait_time_s``.
    """

    def __init__(
        self,
        fully_qualified_namespace: str,
        queue: str,
        *,
        credential: Any = None,
        max_wait_time_s: float = 5.0,
        client: Any = None,
    ) -> None:
        from azure.servicebus import ServiceBusClient, ServiceBusReceiveMode
        from azure.servicebus.exceptions import MessageLockLostError

        from orders.messaging.azure import validate_namespace

        if not max_wait_time_s > 0:
            raise ValueError(f"max_wait_time_s: must be positive, got {max_wait_time_s!r}")
        if client is None:
            namespace = validate_namespace(fully_qualified_namespace)
            if credential is None:
                from azure.identity import DefaultAzureCredential

                credential = DefaultAzureCredential()
            client = ServiceBusClient(namespace, credential)
        self._client = client
        self._namespace = fully_qualified_namespace
        self._credential = credential
        self._receiver = self._client.get_queue_receiver(
            queue_name=queue, receive_mode=ServiceBusReceiveMode.PEEK_LOCK
        )
        self._lock_lost = MessageLockLostError
        self._max_wait_time_s = max_wait_time_s

    def receive(self, max_count: int) -> Sequence[ReplyMessage]:
        """Receive up to ``max_count`` messages, waiting at most ``max_wait_time_s``.

        Service Bus counts *earlier* deliveries (AMQP delivery-count); the port counts this one too.
        """
        found = self._receiver.receive_messages(
            max_message_count=max_count, max_wait_time=self._max_wait_time_s
        )
        return [ReplyMessage(b"".join(m.body), str(m.message_id), (m.delivery_count or 0) + 1, m,
                             m.enqueued_time_utc)
                for m in found]

    def complete(self, message: ReplyMessage) -> None:
        """Complete the SDK message; :class:`~client.watch.LockLostError` if the lock is lost."""
        try:
            self._receiver.complete_message(message.handle)
        except self._lock_lost as exc:
            raise LockLostError(str(exc)) from exc

    def dead_letter(self, message: ReplyMessage, reason: str, description: str) -> None:
        """Dead-letter the SDK message with a reason and an error description."""
        try:
            self._receiver.dead_letter_message(
                message.handle, reason=reason, error_description=description
            )
        except self._lock_lost as exc:
            raise LockLostError(str(exc)) from exc

    def peek(self, from_sequence_number: int, max_count: int) -> Sequence[ReplyMessage]:
        """Browse up to ``max_count`` messages from ``from_sequence_number`` on (Listen right)."""
        found = self._receiver.peek_messages(max_message_count=max_count,
                                             sequence_number=max(from_sequence_number, 1))
        return [ReplyMessage(b"".join(m.body), str(m.message_id), m.delivery_count or 0, None,
                             m.enqueued_time_utc, m.sequence_number)
                for m in found]

    def dead_letter_count(self, queue: str) -> int | None:
        """Return ``queue``'s dead-letter count, or None without the Manage right."""
        from azure.core.exceptions import AzureError
        from azure.servicebus.management import ServiceBusAdministrationClient

        if self._credential is None:  # an SDK client was passed in: no identity to ask with
            return None
        try:
            with ServiceBusAdministrationClient(self._namespace, self._credential) as admin:
                props = admin.get_queue_runtime_properties(queue)
                return int(props.dead_letter_message_count or 0)
        except AzureError:
            return None

    def close(self) -> None:
        """Close the receiver and the client."""
        self._receiver.close()
        self._client.close()
