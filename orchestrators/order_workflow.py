"""The order workflow: one attempt of one order, dispatched to its workflow version (S4-S7, X6).

The live versions new orders start on, written out straight, are in
:mod:`orchestrators.live_workflow` (the module a change goes into); the frozen ones, which
orders in flight still finish on, in :mod:`orchestrators.frozen_workflows`. Which version an
attempt runs, what each outcome does to the record and why a version is frozen once orders
run under it: docs/pipeline.md, "The order workflow".
Deterministic: context time only, no I/O, settings in the input (D4).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.attempt_ends import Attempt
from orchestrators.calls import call
from orchestrators.frozen_workflows import FROZEN_WORKFLOWS
from orchestrators.live_workflow import LIVE_WORKFLOWS
from orders.lifecycle.ids import workflow_version_of
from orders.models.activities import ALERT_OPERATOR
from orders.models.attempt_io import OrderWorkflowInput, UnknownWorkflowVersion
from orders.models.notice_io import AlertOperatorInput
from orders.names import WORKFLOW_VERSIONS

WORKFLOWS: dict[int, Callable[[DurableOrchestrationContext, OrderWorkflowInput], Attempt]] = {
    **FROZEN_WORKFLOWS, **LIVE_WORKFLOWS}
"""Workflow versions still registered; an order runs the version it started with (X6)."""

if sorted(WORKFLOWS) != list(WORKFLOW_VERSIONS):
    raise RuntimeError(f"workflow versions {sorted(WORKFLOWS)} are not those of "
                       f"orders.names.WORKFLOW_VERSIONS {list(WORKFLOW_VERSIONS)}")


def attempt_version(context: DurableOrchestrationContext, data: OrderWorkflowInput) -> int:
    """Return the workflow version an attempt runs (X6): ``context.version``, else the input's."""
    from_platform = workflow_version_of(getattr(context, "version", None))
    if from_platform is not None:
        return from_platform
    return data.workflow_version


def order_workflow(
        context: DurableOrchestrationContext) -> Generator[Any, Any, dict[str, Any]]:
    """Dispatch one attempt to the workflow version its order started with (X6).

    Returns the attempt's :data:`~orders.models.attempt_io.AttemptOutcome` in JSON form; an
    unregistered version alerts and returns ``unknownWorkflowVersion``, the record untouched.

    Raises
    ------
    ValueError
        If the input or an activity's result breaks its contract (the instance fails; the
        supervisor recovers the record once CompleteBy has passed).
    """
    data = OrderWorkflowInput.model_validate(context.get_input())
    version = attempt_version(context, data)
    run = WORKFLOWS.get(version)
    if run is None:
        yield from call(context, ALERT_OPERATOR, AlertOperatorInput(
            kind="UnknownWorkflowVersion", order_key=data.order_key,
            instance_id=context.instance_id,
            reason=f"workflow version {version} is not registered; known: "
                   f"{sorted(WORKFLOWS)}"))
        return UnknownWorkflowVersion().model_dump(mode="json")
    outcome = yield from run(context, data)
    return outcome.model_dump(mode="json")
