"""Registers the order workflow orchestrator."""

import azure.durable_functions as df

from orders import names
from orders.orchestrators.order_workflow import order_workflow

bp = df.Blueprint()


@bp.orchestration_trigger(context_name="context", orchestration=names.ORDER_WORKFLOW)
def order_workflow_orchestrator(context: df.DurableOrchestrationContext):
    """One attempt of one order (SPEC S4-S7)."""
    return (yield from order_workflow(context))
