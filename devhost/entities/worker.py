"""The entity work loop: claim entities with requests, run their batches, commit (D10).

One poller per host process (a thread, or a drain step in tests); entity leases keep two
processes off one entity.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from devhost.entities.batch import run_batch
from devhost.taskhub.store import TaskHub

log = logging.getLogger("devhost.entities")

MAX_ENTITIES_PER_POLL = 16
"""Entities claimed in one transaction; their batches commit together in the next one."""


class EntityWorker:
    """Run the batches of the app's entities against one task hub.

    ``entities`` maps lower-case names to ``FunctionDef``; a batch (at most ``batch_size``,
    ``maxEntityOperationBatchSize``) must commit within ``lease``.
    """

    is_schedule = False
    """Entity requests are work: they keep a drain going (see ``run_until_idle``)."""

    def __init__(self, taskhub: TaskHub, entities: dict[str, Any], *, owner: str,
                 lease: timedelta = timedelta(seconds=30), batch_size: int = 50) -> None:
        self.taskhub = taskhub
        self.handlers = {name: fdef.func for name, fdef in entities.items()}
        self.owner = owner
        self.lease = lease
        self.batch_size = batch_size

    def poll_once(self) -> int:
        """Run one batch per claimable entity; return the operations run."""
        items = self.taskhub.claim_entities(self.owner, self.lease, MAX_ENTITIES_PER_POLL,
                                            self.batch_size)
        if not items:
            return 0
        known = sorted(self.handlers)
        commits = [run_batch(item, self.handlers.get(item.name), self.taskhub.clock.now(),
                             known) for item in items]
        for item, won in zip(items, self.taskhub.commit_entities(commits), strict=True):
            if not won:
                log.warning("lease on entity %s was lost; its batch is discarded and runs "
                            "again", item.entity_id)
        return sum(len(item.requests) for item in items)

    def next_due(self) -> datetime | None:
        """Return when an entity request can next be claimed, or None if none is queued."""
        return self.taskhub.next_entity_due()
