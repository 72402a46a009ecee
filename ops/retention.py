"""Retention: delete what is kept no longer than its policy says (SPEC S9, X10).

A compensation log entry carries its own ``retainUntil``, fixed when it was written from
its data classification (:mod:`orders.models.compensation`). The timer ``retention_purge``
(``RETENTION_SCHEDULE``) deletes the entries whose time has come, in bounded rounds, so a
backlog after a long pause is cleared over several runs instead of one long one. On Cosmos
DB the container's time-to-live deletes them too; the pass is then a safety net.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from orders.runtime import Services

log = logging.getLogger("orders.ops")

MAX_ROUNDS = 20
"""Rounds of ``RETENTION_PURGE_BATCH`` deletions one pass makes at most."""


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
