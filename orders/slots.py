"""An order workflow attempt that leaves Processing frees a slot under ``MAX_PROCESSING``.

The activities that end an attempt (``finish_attempt``, ``fail_order``) call
:func:`slot_freed` once their write is done; the scheduler registers what a freed slot
does (:func:`scheduler.starter.start_next`: claim and start the next claimable order), so
a backlog refills as attempts end instead of at the starter timer's next run
(docs/performance.md, "A freed slot starts the next order"). The registry keeps the layers
pointing down: activities never import the scheduler.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from orders.runtime import Services

log = logging.getLogger("orders.slots")

SlotFreed = Callable[[Any, Services], Awaitable[object]]
"""What a freed slot runs: ``handler(durable_client, services)``."""

_handlers: list[SlotFreed] = []


def on_slot_freed(handler: SlotFreed) -> None:
    """Register ``handler`` to run each time an attempt frees a slot (once per handler)."""
    if handler not in _handlers:
        _handlers.append(handler)


async def slot_freed(client: Any, services: Services) -> None:
    """Run the registered handlers; their failures are logged, never raised.

    The starter's timer claims what a failed handler left, so the activity that freed the
    slot succeeds as its order did (S3).
    """
    for handler in list(_handlers):
        try:
            await handler(client, services)
        except Exception:  # noqa: BLE001 - the starter's timer is the safety net
            log.exception("a freed slot could not start the next order; the starter's "
                          "timer claims it on its next run")
