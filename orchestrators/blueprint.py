"""Registers the orchestrators: the order workflow and the compensation workflow."""

from collections.abc import Generator
from typing import Any

import azure.durable_functions as df

from orchestrators.compensation_workflow import compensation_workflow
from orchestrators.order_workflow import order_workflow
from orders import names
from orders.durable_blueprint import DurableBlueprint

bp = DurableBlueprint()


@bp.orchestration_trigger(context_name="context", orchestration=names.ORDER_WORKFLOW)
def order_workflow_orchestrator(
        context: df.DurableOrchestrationContext) -> Generator[Any, Any, dict[str, Any]]:
    """One attempt of one order (S4-S7, X6)."""
    return (yield from order_workflow(context))


@bp.orchestration_trigger(context_name="context", orchestration=names.COMPENSATION_WORKFLOW)
def compensation_workflow_orchestrator(
        context: df.DurableOrchestrationContext) -> Generator[Any, Any, dict[str, Any]]:
    """One attempt at undoing an order's completed steps (S9)."""
    return (yield from compensation_workflow(context))
