"""Dead-letter depth per queue, from the local engine or Azure Service Bus (SPEC X8).

A message in a dead-letter subqueue is a message nobody will process again without an
operator: a poison order, an agent request that failed every delivery, a reply that could
not be routed. Their number per queue is part of the ops summary and a metric to alert on.

Locally the counts come from the local host's Service Bus engine (the running host's own
engine, or the data folder's; ``devhost`` is imported only then: it is not deployed). In
Azure they come from the Service Bus administration client, which needs the *Manage* right
(role "Azure Service Bus Data Owner") on the namespace; without it the depth is reported as
unavailable with the reason, and the namespace's Azure Monitor metric
``DeadletteredMessages`` (per entity) is the place to alert instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger("orders.ops")


def _local_depths(data_dir: str, queues: list[str]) -> dict[str, int]:
    from devhost.runtime import current

    host = current()
    if host is not None and Path(host.data_dir).resolve() == Path(data_dir).resolve():
        engine = host.engine
        return {q: engine.counts(q).dead_letter for q in queues}
    from devhost.servicebus import open_engine

    engine = open_engine(data_dir)
    try:
        return {q: engine.counts(q).dead_letter for q in queues}
    finally:
        engine.close()


def _azure_depths(namespace: str, queues: list[str]) -> dict[str, int]:
    from azure.identity import DefaultAzureCredential
    from azure.servicebus.management import ServiceBusAdministrationClient

    with ServiceBusAdministrationClient(namespace, DefaultAzureCredential()) as admin:
        return {q: admin.get_queue_runtime_properties(q).dead_letter_message_count
                for q in queues}


def dead_letter_depths(settings: Any, queues: Iterable[str]) -> tuple[dict[str, int] | None,
                                                                       str | None]:
    """Count the messages in each queue's dead-letter subqueue.

    Parameters
    ----------
    settings : orders.settings.Settings
        ``MESSAGING_BACKEND`` with ``DEVHOST_DATA_DIR`` or
        ``SERVICEBUS__fullyQualifiedNamespace``.
    queues : iterable of str
        Queue names.

    Returns
    -------
    (dict of str to int or None, str or None)
        The depths, or None with a note saying why they could not be read.
    """
    names = list(queues)
    try:
        if settings.MESSAGING_BACKEND == "local":
            return _local_depths(settings.DEVHOST_DATA_DIR or ".data", names), None
        return _azure_depths(settings.SERVICEBUS__fullyQualifiedNamespace, names), None
    except Exception as exc:  # noqa: BLE001 - an unreadable depth must not fail the summary
        note = (f"dead-letter depth unavailable ({type(exc).__name__}: {exc}); in Azure grant "
                "the app 'Azure Service Bus Data Owner' or alert on the namespace metric "
                "DeadletteredMessages")
        log.warning("%s", note)
        return None, note
