"""Dead-letter depths for the ops summary, or the reason they cannot be read (SPEC X8).

The reading itself is the process's :class:`~orders.messaging.depths.DepthReader`
(built once, in :mod:`orders.runtime`). In Azure it needs the *Manage* right (role "Azure
Service Bus Data Owner"); without it the depth is reported as unavailable with the reason,
and the namespace's Azure Monitor metric ``DeadletteredMessages`` (per entity) is the
place to alert instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from orders.messaging.depths import DepthReader

log = logging.getLogger("orders.ops")


def dead_letter_depths(reader: DepthReader, queues: Iterable[str]
                       ) -> tuple[dict[str, int] | None, str | None]:
    """Count the messages in each queue's dead-letter subqueue.

    Parameters
    ----------
    reader : DepthReader
        The process's depth reader (``Services.depths``).
    queues : iterable of str
        Queue names.

    Returns
    -------
    (dict of str to int or None, str or None)
        The depths, or None with a note saying why they could not be read.
    """
    try:
        return reader.dead_letter_depths(list(queues)), None
    except Exception as exc:  # noqa: BLE001 - an unreadable depth must not fail the summary
        note = (f"dead-letter depth unavailable ({type(exc).__name__}: {exc}); in Azure grant "
                "the app 'Azure Service Bus Data Owner' or alert on the namespace metric "
                "DeadletteredMessages")
        log.warning("%s", note)
        return None, note
