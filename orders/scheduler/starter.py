"""The starter (SPEC S3): claim Pending records, then start their orchestrations.

For each startable record (Pending, LockedBy null, not held back) the starter builds the id
of the next attempt, claims the record with a conditional update (ETag) that sets
Processing and LockedBy, and only then starts the orchestration under that id. Two starters
can never start the same attempt: only one claim per ETag succeeds, and the instance id is
unique in the task hub.

The starter keeps at most MAX_PROCESSING attempts in Processing: starting more than the
agents can serve before CompleteBy would only make attempts expire in the queues.

Crash between claim and start: the claim also sets CompleteBy = now + START_GRACE_S. If the
orchestration never starts, nothing renews that deadline, so the supervisor finds the record
Processing with an expired CompleteBy and returns it to Pending for a new attempt (V2).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from orders.models import ProcessState, StateRecord
from orders.names import ORDER_WORKFLOW
from orders.runtime import Services
from orders.scheduler.instance_ids import instance_id
from orders.stores.errors import PreconditionFailedError

log = logging.getLogger("orders.starter")


@dataclass(frozen=True)
class StartReport:
    """What one starter run did."""

    claimed: int
    started: int
    lost_races: int


def workflow_input(record: StateRecord, services: Services) -> dict[str, Any]:
    """Build the orchestrator input: everything it must not read from settings itself.

    Settings are passed in, not read by the orchestrator, so a replay sees the values the
    attempt started with (deterministic orchestrator code, SPEC D4).
    """
    s = services.settings
    return {"orderId": record.order_id, "attempt": record.attempt,
            "workflowVersion": record.workflow_version,
            "deadlineS": s.ORDER_DEADLINE_S, "agentMaxAttempts": s.AGENT_MAX_ATTEMPTS}


async def run_starter(client: Any, services: Services) -> StartReport:
    """Claim startable records and start one orchestration per claim.

    Parameters
    ----------
    client : DurableOrchestrationClient
        The SDK's durable client.
    services : Services
        Stores, clock and settings.

    Returns
    -------
    StartReport
    """
    states = services.stores.states
    now = services.clock.now()
    claimed = started = lost = 0
    processing = states.count_by_state([ProcessState.PROCESSING]).get(ProcessState.PROCESSING, 0)
    room = min(services.settings.STARTER_BATCH, services.settings.MAX_PROCESSING - processing)
    if room <= 0:
        return StartReport(0, 0, 0)
    for record in states.find_startable(now, room):
        attempt = record.attempt + 1
        iid = instance_id(record.order_id, attempt)
        try:
            mine = states.replace(record.model_copy(update={
                "process_state": ProcessState.PROCESSING, "locked_by": iid,
                "attempt": attempt, "not_before": None,
                # The workflow version is fixed when the first attempt starts (X6).
                "workflow_version": record.workflow_version if record.attempt
                else services.settings.WORKFLOW_VERSION,
                "complete_by": now + services.settings.start_grace}))
        except PreconditionFailedError:
            lost += 1  # another starter claimed it first (SPEC S3, V4)
            continue
        claimed += 1
        try:
            await client.start_new(ORDER_WORKFLOW, iid, workflow_input(mine, services))
            started += 1
        except Exception:  # noqa: BLE001 - the supervisor recovers it after START_GRACE_S
            log.exception("order %s: claimed attempt %s but could not start it", record.order_id,
                          iid)
    if claimed or lost:
        log.info("starter: claimed=%d started=%d lost_races=%d", claimed, started, lost)
    return StartReport(claimed, started, lost)
