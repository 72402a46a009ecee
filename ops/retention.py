"""Retention: delete what is kept no longer than its policy says (SPEC S9, X10).

Ended orchestration instances (Completed, Failed, Terminated) and their histories go once
they were created more than ``RETENTION_DAYS`` ago: :func:`purge_instances` asks the
durable client to purge by time window (``purge_instance_history_by``), the call the
Durable Functions extension serves on Azure and the local host serves the same way, so
the task hub holds about ``RETENTION_DAYS`` of finished orders however long the app runs.

A compensation log entry carries its own ``retainUntil``, fixed when it was written from
its data classification (:mod:`orders.models.compensation`). The timer ``retention_purge``
(``RETENTION_SCHEDULE``) deletes the entries whose time has come, in bounded rounds, so a
backlog after a long pause is cleared over several runs instead of one long one. On Cosmos
DB the container's time-to-live deletes them too; the pass is then a safety net.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import azure.durable_functions as df

from orders.runtime import Services

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


async def purge_instances(client: Any, now: datetime, retention_days: float) -> int:
    """Purge ended instances created more than ``retention_days`` before ``now`` (X10).

    Parameters
    ----------
    client : DurableOrchestrationClient
        The durable client of the timer function.
    now : datetime
        Timezone-aware current time.
    retention_days : float
        ``RETENTION_DAYS``: how long an ended instance and its history are kept.

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
    result = await client.purge_instance_history_by(created_time_from=PURGE_FROM,
                                                    created_time_to=cutoff,
                                                    runtime_status=ENDED)
    deleted = int(result.instances_deleted)
    if deleted:
        log.info("retention: purged %d ended orchestration instances created before %s",
                 deleted, cutoff.isoformat())
    return deleted
