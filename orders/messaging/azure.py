"""Messaging adapter for Azure: azure-servicebus with a managed identity, no secrets.

The client authenticates with :class:`~azure.identity.DefaultAzureCredential` against a
fully-qualified namespace (``<ns>.servicebus.windows.net``); connection strings are
refused (SPEC X10: managed identities, no secrets in code). The Function App's identity
needs the "Azure Service Bus Data Sender" role on the queues it sends to.
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
    # Pass by themselves: the namespace unreachable, slow, throttling, or the queue full
    # until receivers drain it (the SDK marks quota exceeded not retryable for its own
    # immediate retries; later, the same send can succeed).
    sb_errors.ServiceBusConnectionError,
    sb_errors.ServiceBusCommunicationError,
    sb_errors.OperationTimeoutError,
    sb_errors.ServiceBusServerBusyError,
    sb_errors.ServiceBusQuotaExceededError,
)


def to_service_bus_message(message: OutgoingMessage) -> ServiceBusMessage:
    """Build the SDK message carrying every field of a port message.

    Parameters
    ----------
    message : OutgoingMessage
        The port message.

    Returns
    -------
    ServiceBusMessage
        Body bytes, ``message_id``, ``application_properties`` (plus the current
        ``traceparent``, :func:`~orders.observability.tracing.message_properties`),
        ``correlation_id``,
        ``content_type``, ``scheduled_enqueue_time_utc`` and ``time_to_live`` set.
    """
    # The SDK's parameter is a dict keyed str | bytes (invariant, so a dict[str, ...] does not
    # fit) whose values leave out None, which AMQP carries and the port allows. The current
    # trace context goes along as ``traceparent`` (SPEC X8).
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
    """Check that a namespace is a bare host name, not a connection string or URL.

    Parameters
    ----------
    fully_qualified_namespace : str
        For example ``orders-prod.servicebus.windows.net``.

    Returns
    -------
    str
        The host name, lower case.

    Raises
    ------
    ValueError
        Naming the field, for a connection string, a URL or a malformed host name.
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

    Parameters
    ----------
    fully_qualified_namespace : str, optional
        ``<ns>.servicebus.windows.net``; required unless ``client`` is given.
    credential : azure.core.credentials.TokenCredential, optional
        Defaults to :class:`~azure.identity.DefaultAzureCredential` (managed identity in
        Azure, developer login elsewhere).
    client : ServiceBusClient-like, optional
        Any object with ``get_queue_sender(queue_name=...)`` and ``close()``; tests pass
        a fake here. When given, namespace and credential are not used.
    retry_total : int
        The SDK's retries per send. They cannot multiply remote-service calls (a resend
        carries the same MessageId and is dropped by duplicate detection), but they add
        latency, so keep them small (SPEC X2).

    Raises
    ------
    ValueError
        If the namespace is missing, a connection string or not a host name.

    Notes
    -----
    SDK senders are not thread-safe; sends through one instance are serialised.
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
        """Send messages in one SDK call (one batch).

        Raises
        ------
        QueueNotFoundError
            Permanent: the queue does not exist in the namespace.
        MessageRejectedError
            Permanent: the batch exceeds the maximum message size.
        MessagingUnavailableError
            Retryable: the namespace stayed unreachable, busy or full through the SDK's
            retries.
        MessagingError
            Permanent: other Service Bus failures, such as a missing role assignment.
        """
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
