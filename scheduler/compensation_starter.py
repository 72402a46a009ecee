"""The compensation starter (S9): :mod:`scheduler.starter`'s claim-then-start for Compensating."""

from __future__ import annotations

import logging
from typing import Any

from orders.lifecycle.changes import claim_compensation
from orders.models import ProcessState, StateRecord
from orders.models.compensation_io import CompensationWorkflowInput
from orders.names import COMPENSATION_VERSION, COMPENSATION_WORKFLOW
from orders.runtime import Services
from orders.settings import Settings
from orders.threads import off_loop
from scheduler.starter import StartReport, claim_and_start

log = logging.getLogger("orders.compensation")


def compensation_input(record: StateRecord, settings: Settings) -> dict[str, Any]:
    """Build the compensation orchestrator's input, its contract's JSON form (D4, X8).

    Raises
    ------
    pydantic.ValidationError
        If the record or the settings break :class:`CompensationWorkflowInput`.
    """
    return CompensationWorkflowInput(
        order_key=record.order_key, workflow_version=record.workflow_version,
        compensation_version=COMPENSATION_VERSION, deadline_s=settings.COMPENSATION_DEADLINE_S,
        agent_max_attempts=settings.AGENT_MAX_ATTEMPTS,
        trace_parent=record.attempt_trace or None).model_dump(mode="json")


async def start_compensations(client: Any, services: Services) -> StartReport:
    """Claim handed-over records and start one compensation attempt per claim."""
    states, s, now = services.stores.states, services.settings, services.clock.now()
    records = await off_loop(states.find_startable, now, s.STARTER_BATCH,
                                      ProcessState.COMPENSATING)
    return await claim_and_start(client, states, records,
                                 lambda r: claim_compensation(r, now + s.start_grace),
                                 COMPENSATION_WORKFLOW, lambda r: compensation_input(r, s),
                                 "compensation starter")
