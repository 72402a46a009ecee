"""The entity work loop: claim entities with requests, run their batches, commit (SPEC D10).

:class:`EntityWorker` is one of the host's pollers: a thread of its own when the host runs
(:meth:`devhost.run.host.LocalHost.start`), a step of drain mode in tests. Every host process
runs one, and the entity leases keep two processes off one entity.
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

    Parameters
    ----------
    taskhub : TaskHub
        The shared task hub (its entity queue).
    entities : dict
        The app's entity functions by lower-case entity name (``FunctionDef``).
    owner : str
        Lease owner id (the process's worker id).
    lease : timedelta
        How long a claimed entity stays leased; a batch must commit within it.
    batch_size : int
        Operations per batch at most (host.json ``maxEntityOperationBatchSize``).
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
        """Run one batch for each claimable entity (up to :data:`MAX_ENTITIES_PER_POLL`).

        Returns
        -------
        int
            Operations run.
        """
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
