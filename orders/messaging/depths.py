"""Dead-letter depth per queue, read from the local engine or Azure Service Bus (SPEC X8).

A message in a dead-letter subqueue is one nobody will process again without an
operator: a poison order, an agent request that failed every delivery, a reply that could
not be routed. Their number per queue is part of the ops summary and a metric to alert on.

One reader per process (:class:`orders.runtime.Services` holds it and closes it):

- :class:`orders.messaging.local.LocalDepthReader`: the embedded Service Bus engine
  (:mod:`sqlitebus`) on the local host's data folder, opened on first use and kept;
- :class:`AzureDepthReader`: the Service Bus administration client, created on first use
  with the process's one credential and kept, so a timer that runs every minute opens no
  new connection or token cache each time. It needs the *Manage* right ("Azure Service
  Bus Data Owner") on the namespace or the queues; without it the read fails and the
  caller reports the depth as unavailable.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from orders.messaging.settlement import DEAD_LETTERS_QUEUE


class DepthReader(Protocol):
    """Reads the dead-letter depth of queues."""

    def dead_letter_depths(self, queues: list[str]) -> dict[str, int]:
        """Return the number of dead-lettered messages per queue.

        Raises
        ------
        Exception
            Whatever the backend raises when the depth cannot be read.
        """
        ...

    def close(self) -> None:
        """Release the reader's connections."""
        ...


class AzureDepthReader:
    """Dead-letter depths from the Service Bus administration client, built once.

    Parameters
    ----------
    namespace : str
        ``<ns>.servicebus.windows.net``.
    credential : azure.core.credentials.TokenCredential
        The process's credential (managed identity in Azure).
    client : ServiceBusAdministrationClient-like, optional
        Built on first use when None; tests pass one.
    """

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
        """Return the dead-letter depth of each queue; see :class:`DepthReader`.

        For ``dead-letters``, where the app forwards what it dead-letters in Azure
        (:mod:`orders.messaging.settlement`), every message it holds counts: its active
        messages are dead letters too.
        """
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
