"""Retention: delete what is kept no longer than its policy says (S9, X10).

See docs/operations.md, "Retention: what is deleted, and when".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import azure.durable_functions as df

from ops.instance_pages import instance_pages
from orders.lifecycle.ids import order_key_of_instance
from orders.models import ProcessState
from orders.runtime import Services
from orders.stores import StateStore
from orders.threads import off_loop

log = logging.getLogger("orders.ops")

MAX_ROUNDS = 20
"""Rounds of ``RETENTION_PURGE_BATCH`` deletions one pass makes at most."""

PURGE_FROM = datetime(2000, 1, 1)
"""Start of the purge window (the API requires one): before any instance of this app."""

ENDED = [df.OrchestrationRuntimeStatus.Completed, df.OrchestrationRuntimeStatus.Failed,
         df.OrchestrationRuntimeStatus.Terminated]


@dataclass(frozen=True)
class PurgeReport:
    """What one retention pass deleted; ``complete`` False if it stopped at :data:`MAX_ROUNDS`."""

    deleted: int
    rounds: int
    complete: bool


def purge_compensation_log(services: Services) -> PurgeReport:
    """Delete compensation log entries past their ``retainUntil``, in bounded rounds.

    Raises
    ------
    orders.stores.StoreError
        If the log cannot be read or written (the next run tries again).
    """
    batch = services.settings.RETENTION_PURGE_BATCH
    now = services.clock.now()
    deleted = rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        count = services.stores.compensation.purge_expired(now, batch)
        deleted += count
        if count < batch:
            report = PurgeReport(deleted, rounds, complete=True)
            break
    else:
        report = PurgeReport(deleted, rounds, complete=False)
    if deleted:
        log.info("retention: deleted %d compensation log entries past retainUntil in %d "
                 "round(s)%s", deleted, rounds, "" if report.complete else "; more remain")
    return report


FINISHED = frozenset({ProcessState.PROCESSED, ProcessState.COMPENSATED})
"""Order states whose instances may go: nothing will read or resume them."""
MAX_PURGED_PER_PASS = 5_000
"""Instances one pass purges at most (one request each); a backlog takes several passes."""


async def purge_instances(client: Any, now: datetime, retention_days: float,
                          states: StateStore | None = None) -> int:
    """Purge ended instances created more than ``retention_days`` before ``now`` (X10).

    Only those whose order is :data:`FINISHED` or unknown (``states`` None: all); return how
    many were deleted.

    Raises
    ------
    Exception
        Whatever the durable client raises for an answer other than 200 or 404 (the SDK
        raises a plain ``Exception``); the timer fails and its next run tries again.
    """
    cutoff = (now - timedelta(days=retention_days)).astimezone(UTC).replace(tzinfo=None)
    # Chosen while listing, purged after: a purge in between could move the pages.
    chosen: list[str] = []
    kept = 0
    finished: dict[str | None, bool] = {}  # by order key: an order's attempts read it once
    async for page in instance_pages(client, created_time_from=PURGE_FROM,
                                     created_time_to=cutoff, runtime_status=ENDED):
        for instance_id in page:
            key = order_key_of_instance(instance_id)
            if states is not None and key not in finished:
                finished[key] = await off_loop(_finished, states, key)
            if states is None or finished[key]:
                chosen.append(instance_id)
            else:
                kept += 1
        if len(chosen) >= MAX_PURGED_PER_PASS:
            break
    deleted = 0
    for instance_id in chosen[:MAX_PURGED_PER_PASS]:
        deleted += int((await client.purge_instance_history(instance_id)).instances_deleted)
    if deleted or kept:
        log.info("retention: purged %d ended orchestration instances created before %s; "
                 "kept %d of orders not finished", deleted, cutoff.isoformat(), kept)
    return deleted


def _finished(states: StateStore, key: str | None) -> bool:
    """Whether the order ``key`` is finished, or unknown (nothing to keep)."""
    record = states.get(key) if key else None
    return record is None or record.process_state in FINISHED
