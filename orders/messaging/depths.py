"""Dead-letter depth per queue, local or Azure Service Bus (X8); Azure needs the *Manage* right."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from orders.messaging.settlement import DEAD_LETTERS_QUEUE


class DepthReader(Protocol):
    """Reads the dead-letter depth of queues."""

    def dead_letter_depths(self, queues: list[str]) -> dict[str, int]:
        """Return the number of dead-lettered messages per queue (raises what the backend does)."""
        ...

    def close(self) -> None:
        """Release the reader's connections."""
        ...


class AzureDepthReader:
    """Dead-letter depths from the Service Bus administration client, built once."""

    def __init__(self, namespace: str, credential: Any, client: Any = None) -> None:
        self._namespace = namespace
        self._credential = credential
        self._client = client
        self._lock = threading.Lock()

    def _admin(self) -> Any:
        with self._lock:
            if self._client is None:
                from azure.servicebus.management import ServiceBusAdministrationClient

                self._client = ServiceBusAdministrationClient(self._namespace,
                                                              self._credential)
            return self._client

    def dead_letter_depths(self, queues: list[str]) -> dict[str, int]:
        """Return each queue's dead-letter depth; every message of ``dead-letters`` counts."""
        admin = self._admin()
        found = {q: admin.get_queue_runtime_properties(q) for q in queues}
        return {q: p.dead_letter_message_count
                + (p.active_message_count if q == DEAD_LETTERS_QUEUE else 0)
                for q, p in found.items()}

    def close(self) -> None:
        """Close the administration client if one was built."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
