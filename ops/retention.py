"""Retention: delete what is kept no longer than its policy says (SPEC S9, X10).

Ended orchestration instances (Completed, Failed, Terminated) and their histories go once
they were created more than ``RETENTION_DAYS`` ago and their order is finished:
:func:`purge_instances` lists them through the durable client and purges each one
(``get_status_by``, ``purge_instance_history``: calls the Durable Functions extension
serves on Azure and the local host serves the same way), so the task hub holds about
``RETENTION_DAYS`` of finished orders however long the app runs, plus the attempts of the
orders still waiting for an operator.

A compensation log entry carries its own ``retainUntil``, fixed when it was written from
its data classification (:mod:`orders.models.compensation`). The timer ``retention_purge``
(``RETENTION_SCHEDULE``) deletes the entries whose time has come, in bounded rounds, so a
backlog after a long pause is cleared over several runs instead of one long one. On Cosmos
DB the container's time-to-live deletes them too; the pass is then a safety net.
"""

from __future__ import annotations

import asyncio
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

log = logging.getLogger("orders.ops")

MAX_ROUNDS = 20
"""Rounds of ``RETENTION_PURGE_BATCH`` deletions one pass makes at most."""

PURGE_FROM = datetime(2000, 1, 1)
"""Start of the purge window (the API requires one): before any instance of this app."""

ENDED = [df.OrchestrationRuntimeStatus.Completed, df.OrchestrationRuntimeStatus.Failed,
         df.OrchestrationRuntimeStatus.Terminated]
"""Runtime statuses the instance purge deletes; running instances are never purged."""


@dataclass(frozen=True)
class PurgeReport:
    """What one retention pass deleted.

    Attributes
    ----------
    deleted : int
        Compensation log entries deleted.
    rounds : int
        Rounds made (each one ``purge_expired`` call).
    complete : bool
        False if the pass stopped at :data:`MAX_ROUNDS` with more to delete.
    """

    deleted: int
    rounds: int
    complete: bool


def purge_compensation_log(services: Services) -> PurgeReport:
    """Delete compensation log entries past their ``retainUntil``, in bounded rounds.

    Parameters
    ----------
    services : Services
        The compensation log, clock and settings (``RETENTION_PURGE_BATCH``).

    Returns
    -------
    PurgeReport

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

    An instance of an order that is not finished is kept, whatever its age: an order in
    Error or CompensationFailed waits for an operator, who reads its attempts' histories
    before acting (S7), and a running order may still be compensated. So instead of one
    purge by time window, which cannot leave instances out, the pass lists the ended
    instances of the window and purges each one whose order is finished
    (:data:`FINISHED`) or unknown, at most :data:`MAX_PURGED_PER_PASS` per pass. It reads
    every page of the list (:func:`ops.instance_pages.instance_pages`), so the kept instances,
    the oldest, never hide the ones behind them.

    Parameters
    ----------
    client : DurableOrchestrationClient
        The durable client of the timer function.
    now : datetime
        Timezone-aware current time.
    retention_days : float
        ``RETENTION_DAYS``: how long an ended instance and its history are kept.
    states : StateStore, optional
        The state records, to tell a finished order from one that is not; None purges
        every ended instance of the window (an app without orders).

    Returns
    -------
    int
        Instances deleted (with their histories).

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
                finished[key] = await asyncio.to_thread(_finished, states, key)
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
