"""Registers the workflow's activities; each delegates to :mod:`orders.activities.steps`."""

import azure.durable_functions as df

from orders import names
from orders.activities import steps
from orders.runtime import services

bp = df.Blueprint()


@bp.activity_trigger(input_name="data", activity=names.BEGIN_ATTEMPT)
def begin_attempt(data: dict) -> dict:
    """Set CompleteBy, fenced on LockedBy."""
    return steps.begin_attempt(data, services())


@bp.activity_trigger(input_name="orderId", activity=names.LOAD_ORDER)
def load_order(orderId: str) -> dict:  # noqa: N803 - binding name is the wire name
    """Read the order."""
    return steps.load_order(orderId, services())


@bp.activity_trigger(input_name="data", activity=names.RESERVE_INVENTORY)
def reserve_inventory(data: dict) -> dict:
    """Reserve the order's lines (local step)."""
    return steps.reserve_inventory(data, services())


@bp.activity_trigger(input_name="data", activity=names.SEND_AGENT_REQUEST)
def send_agent_request(data: dict) -> str:
    """Send a request to an agent."""
    return steps.send_agent_request(data, services())


@bp.activity_trigger(input_name="data", activity=names.FINISH_ATTEMPT)
def finish_attempt(data: dict) -> dict:
    """Set Processed or Error, fenced on LockedBy."""
    return steps.finish_attempt(data, services())


@bp.activity_trigger(input_name="data", activity=names.PUBLISH_STATUS)
def publish_status(data: dict) -> None:
    """Send a status message to the client's reply queue."""
    steps.publish_status(data, services())


@bp.activity_trigger(input_name="data", activity=names.ALERT_OPERATOR)
def alert_operator(data: dict) -> None:
    """Send an operator alert."""
    steps.alert_operator(data, services())
