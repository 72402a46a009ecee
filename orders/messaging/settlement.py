"""Settle a trigger's message explicitly: dead-letter it with a reason (SPEC S1).

A bad message must be dead-lettered with its reason, never dropped and never retried into
``MaxDeliveryCountExceeded``. The trigger function asks this port to dead-letter the message
it holds (by its lock token) and then returns; the host's auto-complete then finds the
message settled and leaves it.

- Local host: the embedded Service Bus (:mod:`sqlitebus`, imported only when used)
  dead-letters by lock token, as the Functions host's settlement service does.
- Azure: ``azurefunctions-extensions-bindings-servicebus``' ``ServiceBusMessageActions``
  (the Python worker's settlement client, in preview), imported only when used.
"""

from __future__ import annotations

from typing import Any, Protocol

from clocks import Clock


class MessageSettler(Protocol):
    """Dead-letters a message received by a Service Bus trigger."""

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """Move ``message`` to ``queue``'s dead-letter subqueue with a reason.

        Parameters
        ----------
        queue : str
            The queue the trigger reads.
        message : azure.functions.ServiceBusMessage
            The message, holding its lock token.
        reason : str
            DeadLetterReason (short, machine-readable).
        description : str
            DeadLetterErrorDescription (what was wrong, naming the field and rule).
        """
        ...


class LocalSettler:
    """Dead-letters through the embedded Service Bus on the local host's data folder.

    Parameters
    ----------
    data_dir : str
        The local host's data folder.
    clock : Clock, optional
        The host's clock.
    """

    def __init__(self, data_dir: str, clock: Clock | None = None) -> None:
        from sqlitebus import open_engine

        self._engine = open_engine(data_dir, clock=clock)

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """See :meth:`MessageSettler.dead_letter`."""
        self._engine.dead_letter(queue, message.lock_token, reason, description[:4096])


class FunctionsSettler:
    """Dead-letters through the Python worker's message actions (Azure)."""

    def dead_letter(self, queue: str, message: Any, reason: str, description: str) -> None:
        """See :meth:`MessageSettler.dead_letter`."""
        from azurefunctions.extensions.bindings.servicebus import ServiceBusMessageActions

        ServiceBusMessageActions.get_instance().deadletter(
            message, deadletter_reason=reason, deadletter_error_description=description[:4096])
