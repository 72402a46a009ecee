"""Choose the messaging backend by name (``local`` or ``servicebus``), read once from settings.

Adapters are imported only when chosen, so the app in Azure never loads the embedded engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orders.messaging.depths import DepthReader
from orders.messaging.port import MessageSender
from orders.messaging.settlement import MessageSettler

BACKEND_LOCAL = "local"
BACKEND_SERVICEBUS = "servicebus"
BACKENDS = (BACKEND_LOCAL, BACKEND_SERVICEBUS)


@dataclass(frozen=True)
class Messaging:
    """One backend's adapters: the sender, the trigger's settler and the queue browser."""

    sender: MessageSender
    settler: MessageSettler
    depths: DepthReader
    """Also a :class:`~orders.messaging.browse.QueueBrowser`; opens nothing until used."""


def create_messaging(
    backend: str,
    *,
    fully_qualified_namespace: str | None = None,
    credential: Any = None,
    data_dir: str | Path | None = None,
    queues_file: str | Path | None = None,
    clock: Any = None,
) -> Messaging:
    """Create a backend's sender, settler and depth reader; the caller closes them.

    ``servicebus`` needs ``fully_qualified_namespace``, ``local`` needs ``data_dir``.

    Raises
    ------
    ValueError
        If ``backend`` is unknown or a setting it needs is missing (the message names it).
    """
    name = backend.strip().lower() if isinstance(backend, str) else backend
    if name == BACKEND_LOCAL:
        if data_dir is None:
            raise ValueError("data_dir: required for messaging backend 'local'")
        from orders.messaging.local import LocalMessageSender, LocalQueueBrowser, LocalSettler

        return Messaging(
            LocalMessageSender(data_dir=data_dir, queues_file=queues_file, clock=clock),
            LocalSettler(data_dir, clock), LocalQueueBrowser(data_dir, clock))
    if name == BACKEND_SERVICEBUS:
        if not fully_qualified_namespace:
            raise ValueError(
                "fully_qualified_namespace: required for messaging backend 'servicebus' "
                "(e.g. '<ns>.servicebus.windows.net')"
            )
        from orders.messaging.azure import AzureServiceBusSender
        from orders.messaging.browse import AzureQueueBrowser
        from orders.messaging.settlement import ForwardingSettler

        sender = AzureServiceBusSender(fully_qualified_namespace, credential=credential)
        return Messaging(sender, ForwardingSettler(sender),
                         AzureQueueBrowser(fully_qualified_namespace, credential))
    raise ValueError(f"backend: {backend!r} is not one of {list(BACKENDS)}")


def create_sender(backend: str, **options: Any) -> MessageSender:
    """Create a backend's sender alone (a client, the demo); close it when done."""
    return create_messaging(backend, **options).sender
