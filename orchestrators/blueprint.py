"""Registers the orchestrators: the order workflow and the compensation workflow."""

import azure.durable_functions as df

from orchestrators.compensation_workflow import compensation_workflow
from orchestrators.order_workflow import order_workflow
from orders import names

bp = df.Blueprint()


@bp.orchestration_trigger(context_name="context", orchestration=names.ORDER_WORKFLOW)
def order_workflow_orchestrator(context: df.DurableOrchestrationContext):
    """One attempt of one order (SPEC S4-S7, X6)."""
    return (yield from order_workflow(context))


@bp.orchestration_trigger(context_name="context", orchestration=names.COMPENSATION_WORKFLOW)
def compensation_workflow_orchestrator(context: df.DurableOrchestrationContext):
    """One attempt at undoing an order's completed steps (SPEC S9)."""
    return (yield from compensation_workflow(context))
