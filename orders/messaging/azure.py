"""Messaging adapter for Azure: azure-servicebus with a managed identity, no secrets (X10).

The app's identity needs "Azure Service Bus Data Sender" on the queues it sends to.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus import exceptions as sb_errors

from orders.messaging.errors import (
    MessageRejectedError,
    MessagingError,
    MessagingUnavailableError,
    QueueNotFoundError,
)
from orders.messaging.port import MessageSender, OutgoingMessage
from orders.observability.tracing import message_properties

_HOST = re.compile(r"^(?=.{4,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9-]+)+$")

_TRANSIENT = (
    # Pass by themselves; quota exceeded (queue full) too: the SDK does not retry it at once,
    # but the same send can succeed once receivers drain the queue.
    sb_errors.ServiceBusConnectionError,
    sb_errors.ServiceBusCommunicationError,
    sb_errors.OperationTimeoutError,
    sb_errors.ServiceBusServerBusyError,
    sb_errors.ServiceBusQuotaExceededError,
)


def to_service_bus_message(message: OutgoingMessage) -> ServiceBusMessage:
    """Build the SDK message carrying every field of a port message, plus ``traceparent``."""
    # The SDK types it dict[str | bytes, ...] without None (invariant, so ours does not fit),
    # though AMQP carries None and the port allows it.
    properties = cast(dict[str | bytes, Any],
                      message_properties(message.application_properties))
    return ServiceBusMessage(
        message.body_bytes(),
        message_id=message.message_id,
        application_properties=properties or None,
        correlation_id=message.correlation_id,
        content_type=message.content_type,
        scheduled_enqueue_time_utc=message.scheduled_enqueue_time,
        time_to_live=message.time_to_live,
    )


def validate_namespace(fully_qualified_namespace: str) -> str:
    """Return a namespace's host name, lower case.

    Raises
    ------
    ValueError
        For a connection string, a URL or a malformed host name.
    """
    value = fully_qualified_namespace
    if not isinstance(value, str) or not value:
        raise ValueError("fully_qualified_namespace: required, e.g. '<ns>.servicebus.windows.net'")
    if "=" in value or ";" in value:
        raise ValueError(
            "fully_qualified_namespace: looks like a connection string; pass only the host "
            "name '<ns>.servicebus.windows.net' (identity-based access, no secrets)"
        )
    if not _HOST.match(value.lower()):
        raise ValueError(
            f"fully_qualified_namespace: {value!r} is not a host name such as "
            "'<ns>.servicebus.windows.net' (no scheme, port or path)"
        )
    return value.lower()


class AzureServiceBusSender(MessageSender):
    """A :class:`~orders.messaging.port.MessageSender` over Azure Service Bus.

    ``client`` (for tests) replaces namespace and credential. ``retry_total``: the SDK's retries
    per send, which keep the MessageId, so they add latency but never calls (X2). Sends are
    serialised: SDK senders are not thread-safe.

    Raises
    ------
    ValueError
        If the namespace is missing, a connection string or not a host name.
    """

    def __init__(
        self,
        fully_qualified_namespace: str | None = None,
        *,
        credential: Any = None,
        client: Any = None,
        retry_total: int = 3,
    ) -> None:
        if client is None:
            namespace = validate_namespace(fully_qualified_namespace or "")
            if credential is None:
                from azure.identity import DefaultAzureCredential

                credential = DefaultAzureCredential()
            client = ServiceBusClient(namespace, credential, retry_total=retry_total)
        self._client = client
        self._senders: dict[str, Any] = {}
        self._lock = threading.Lock()

    def send_many(self, queue: str, messages: Sequence[OutgoingMessage]) -> None:
        """Send messages in one SDK call; errors mapped by SDK exception type (see the port)."""
        if not messages:
            return
        payload = [to_service_bus_message(message) for message in messages]
        with self._lock, _translated(queue):
            sender = self._senders.get(queue)
            if sender is None:
                sender = self._senders[queue] = self._client.get_queue_sender(queue_name=queue)
            sender.send_messages(payload if len(payload) > 1 else payload[0])

    def close(self) -> None:
        """Close every queue sender and the client."""
        with self._lock:
            for sender in self._senders.values():
                sender.close()
            self._senders.clear()
            self._client.close()


@contextmanager
def _translated(queue: str) -> Iterator[None]:
    # By exception type only (the SDK's own classes, azure.servicebus.exceptions).
    try:
        yield
    except sb_errors.MessagingEntityNotFoundError as exc:
        raise QueueNotFoundError(queue, str(exc)) from exc
    except sb_errors.MessageSizeExceededError as exc:
        raise MessageRejectedError(f"queue {queue!r}: {exc}") from exc
    except _TRANSIENT as exc:
        raise MessagingUnavailableError(f"queue {queue!r}: {exc}") from exc
    except sb_errors.ServiceBusError as exc:
        raise MessagingError(f"queue {queue!r}: {exc}") from exc
