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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from orders.lifecycle.changes import claim_attempt
from orders.models import ProcessState, StateRecord
from orders.names import ORDER_WORKFLOW
from orders.runtime import Services
from orders.stores import StateStore
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


async def claim_and_start(client: Any, states: StateStore, records: Iterable[StateRecord],
                          claim: Callable[[StateRecord], StateRecord], workflow: str,
                          make_input: Callable[[StateRecord], dict[str, Any]],
                          what: str) -> StartReport:
    """Claim each record with its ETag, then start ``workflow`` under the claimed LockedBy.

    The claim-then-start mechanism of SPEC S3, shared by the order starter and the
    compensation starter: a lost ETag race means another starter claimed the record
    (V4); a start that fails leaves the claim's CompleteBy to expire, and the supervisor
    recovers the record.

    Parameters
    ----------
    client : DurableOrchestrationClient
        The SDK's durable client.
    states : StateStore
        The state store.
    records : iterable of StateRecord
        Records to claim, as read (their ETags are the claim's condition).
    claim : callable
        Returns the claimed version of a record (LockedBy = the instance id to start).
    workflow : str
        Orchestrator function name.
    make_input : callable
        Builds the orchestrator input from the claimed record.
    what : str
        Names the starter in its logs.

    Returns
    -------
    StartReport
    """
    claimed = started = lost = 0
    for record in records:
        try:
            mine = states.replace(claim(record))
        except PreconditionFailedError:
            lost += 1  # another starter claimed it first (SPEC S3, V4)
            continue
        claimed += 1
        try:
            await client.start_new(workflow, mine.locked_by, make_input(mine))
            started += 1
        except Exception:  # noqa: BLE001 - the supervisor recovers it after START_GRACE_S
            log.exception("%s: order %s claimed as %s but could not start it", what,
                          record.order_id, mine.locked_by)
    if claimed or lost:
        log.info("%s: claimed=%d started=%d lost_races=%d", what, claimed, started, lost)
    return StartReport(claimed, started, lost)


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
    s = services.settings
    now = services.clock.now()
    processing = states.count_by_state([ProcessState.PROCESSING]).get(ProcessState.PROCESSING, 0)
    room = min(s.STARTER_BATCH, s.MAX_PROCESSING - processing)
    if room <= 0:
        return StartReport(0, 0, 0)

    def claim(record: StateRecord) -> StateRecord:
        # The workflow version is fixed when the first attempt starts (X6).
        return claim_attempt(record, now + s.start_grace, s.WORKFLOW_VERSION)

    return await claim_and_start(client, states, states.find_startable(now, room), claim,
                                 ORDER_WORKFLOW, lambda r: workflow_input(r, services),
                                 "starter")
