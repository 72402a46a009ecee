"""Registers the activities.

Each delegates to :mod:`activities.steps` or :mod:`activities.compensation_steps`.
"""

from typing import Any

from activities import compensation_steps, steps
from orders import names
from orders.durable_blueprint import DurableBlueprint
from orders.runtime import services

bp = DurableBlueprint()


@bp.activity_trigger(input_name="data", activity=names.BEGIN_ATTEMPT)
def begin_attempt(data: dict[str, Any]) -> dict[str, Any]:
    """Set CompleteBy, fenced on LockedBy."""
    return steps.begin_attempt(data, services())


@bp.activity_trigger(input_name="orderId", activity=names.LOAD_ORDER)
def load_order(orderId: str) -> dict[str, Any]:  # noqa: N803 - binding name is the wire name
    """Read the order."""
    return steps.load_order(orderId, services())


@bp.activity_trigger(input_name="data", activity=names.RESERVE_INVENTORY)
def reserve_inventory(data: dict[str, Any]) -> dict[str, Any]:
    """Reserve the order's lines (local step)."""
    return steps.reserve_inventory(data, services())


@bp.activity_trigger(input_name="data", activity=names.SEND_AGENT_REQUEST)
def send_agent_request(data: dict[str, Any]) -> str:
    """Send a request to an agent."""
    return steps.send_agent_request(data, services())


@bp.activity_trigger(input_name="data", activity=names.FINISH_ATTEMPT)
def finish_attempt(data: dict[str, Any]) -> dict[str, Any]:
    """Set Processed or Error, fenced on LockedBy."""
    return steps.finish_attempt(data, services())


@bp.activity_trigger(input_name="data", activity=names.PUBLISH_STATUS)
def publish_status(data: dict[str, Any]) -> None:
    """Send a status message to the client's reply queue."""
    steps.publish_status(data, services())


@bp.activity_trigger(input_name="data", activity=names.ALERT_OPERATOR)
def alert_operator(data: dict[str, Any]) -> None:
    """Send an operator alert."""
    steps.alert_operator(data, services())


@bp.activity_trigger(input_name="data", activity=names.RECORD_STEP)
def record_step(data: dict[str, Any]) -> dict[str, Any]:
    """Write a compensation log entry (S9)."""
    return compensation_steps.record_step(data, services())


@bp.activity_trigger(input_name="data", activity=names.FAIL_ORDER)
def fail_order(data: dict[str, Any]) -> dict[str, Any]:
    """Hand a failed order over to compensation, or set Error (S7, S9)."""
    return compensation_steps.fail_order(data, services())


@bp.activity_trigger(input_name="data", activity=names.BEGIN_COMPENSATION)
def begin_compensation(data: dict[str, Any]) -> dict[str, Any]:
    """Set CompleteBy of a compensation attempt, fenced on LockedBy (S9)."""
    return compensation_steps.begin_compensation(data, services())


@bp.activity_trigger(input_name="orderId", activity=names.PENDING_UNDOS)
def pending_undos(orderId: str) -> list[dict[str, Any]]:  # noqa: N803 - binding name is the wire name
    """Read the logged steps still to undo, newest first (S9)."""
    return compensation_steps.pending_undo_entries(orderId, services())


@bp.activity_trigger(input_name="data", activity=names.RELEASE_INVENTORY)
def release_inventory(data: dict[str, Any]) -> dict[str, Any]:
    """Release the order's reservation (local undo step)."""
    return compensation_steps.release_inventory(data, services())


@bp.activity_trigger(input_name="data", activity=names.FINISH_COMPENSATION)
def finish_compensation(data: dict[str, Any]) -> dict[str, Any]:
    """Set Compensated or CompensationFailed, fenced on LockedBy (S9)."""
    return compensation_steps.finish_compensation(data, services())
