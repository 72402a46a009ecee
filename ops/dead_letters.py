"""Dead-letter depths for the ops summary, or the reason they cannot be read (X8).

In Azure reading needs the *Manage* right; without it the depth is unavailable and the
namespace metric ``DeadletteredMessages`` is the one to alert on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from orders.messaging.depths import DepthReader

log = logging.getLogger("orders.ops")


def dead_letter_depths(reader: DepthReader, queues: Iterable[str]
                       ) -> tuple[dict[str, int] | None, str | None]:
    """Count each queue's dead-letter messages: the depths, or None and a note saying why."""
    try:
        return reader.dead_letter_depths(list(queues)), None
    except Exception as exc:  # noqa: BLE001 - an unreadable depth must not fail the summary
        note = (f"dead-letter depth unavailable ({type(exc).__name__}: {exc}); in Azure grant "
                "the app 'Azure Service Bus Data Owner' or alert on the namespace metric "
                "DeadletteredMessages")
        log.warning("%s", note)
        return None, note
