"""Choose the messaging adapter by backend name, read once at the edge from settings.

``local`` writes into the embedded Service Bus engine (:mod:`sqlitebus`) on the local
host's data folder, ``servicebus`` into Azure Service Bus. Adapters are imported only when
chosen, so the app in Azure never loads the embedded engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orders.messaging.port import MessageSender

BACKEND_LOCAL = "local"
BACKEND_SERVICEBUS = "servicebus"
BACKENDS = (BACKEND_LOCAL, BACKEND_SERVICEBUS)


def create_sender(
    backend: str,
    *,
    fully_qualified_namespace: str | None = None,
    credential: Any = None,
    data_dir: str | Path | None = None,
    queues_file: str | Path | None = None,
    clock: Any = None,
) -> MessageSender:
    """Create the sender for a backend.

    Parameters
    ----------
    backend : {"local", "servicebus"}
        Case-insensitive.
    fully_qualified_namespace : str, optional
        Required for ``servicebus``: ``<ns>.servicebus.windows.net``.
    credential : TokenCredential, optional
        ``servicebus`` only; defaults to ``DefaultAzureCredential``.
    data_dir : str or Path, optional
        Required for ``local``: the host's data folder.
    queues_file : str or Path, optional
        ``local`` only; defaults to ``infra/queues.json``.
    clock : clocks.Clock, optional
        ``local`` only; time source of the engine.

    Returns
    -------
    MessageSender
        The adapter; close it when done.

    Raises
    ------
    ValueError
        If ``backend`` is unknown or a setting it needs is missing (the message names it).
    """
    name = backend.strip().lower() if isinstance(backend, str) else backend
    if name == BACKEND_LOCAL:
        if data_dir is None:
            raise ValueError("data_dir: required for messaging backend 'local'")
        from orders.messaging.local import LocalMessageSender

        return LocalMessageSender(data_dir=data_dir, queues_file=queues_file, clock=clock)
    if name == BACKEND_SERVICEBUS:
        if not fully_qualified_namespace:
            raise ValueError(
                "fully_qualified_namespace: required for messaging backend 'servicebus' "
                "(e.g. '<ns>.servicebus.windows.net')"
            )
        from orders.messaging.azure import AzureServiceBusSender

        return AzureServiceBusSender(fully_qualified_namespace, credential=credential)
    raise ValueError(f"backend: {backend!r} is not one of {list(BACKENDS)}")
