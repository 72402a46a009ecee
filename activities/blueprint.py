"""Registers the activities.

Each delegates to :mod:`activities.steps` or :mod:`activities.compensation_steps`, inside
its span (:func:`~orders.observability.tracing.activity_span`: a child of the attempt's
start, whose trace context the orchestrator wrapped around the input, SPEC X8).
"""

from typing import Any

from activities import compensation_steps, steps
from orders import names
from orders.durable_blueprint import DurableBlueprint
from orders.observability.tracing import activity_span
from orders.runtime import services

bp = DurableBlueprint()


@bp.activity_trigger(input_name="data", activity=names.BEGIN_ATTEMPT)
def begin_attempt(data: Any) -> dict[str, Any]:
    """Set CompleteBy, fenced on LockedBy."""
    with activity_span(names.BEGIN_ATTEMPT, data) as step:
        return steps.begin_attempt(step, services())


@bp.activity_trigger(input_name="orderId", activity=names.LOAD_ORDER)
def load_order(orderId: Any) -> dict[str, Any]:  # noqa: N803 - binding name is the wire name
    """Read the order."""
    with activity_span(names.LOAD_ORDER, orderId) as step:
        return steps.load_order(step, services())


@bp.activity_trigger(input_name="data", activity=names.RESERVE_INVENTORY)
def reserve_inventory(data: Any) -> dict[str, Any]:
    """Reserve the order's lines (local step)."""
    with activity_span(names.RESERVE_INVENTORY, data) as step:
        return steps.reserve_inventory(step, services())


@bp.activity_trigger(input_name="data", activity=names.SEND_AGENT_REQUEST)
def send_agent_request(data: Any) -> str:
    """Send a request to an agent."""
    with activity_span(names.SEND_AGENT_REQUEST, data) as step:
        return steps.send_agent_request(step, services())


@bp.activity_trigger(input_name="data", activity=names.FINISH_ATTEMPT)
def finish_attempt(data: Any) -> dict[str, Any]:
    """Set Processed or Error, fenced on LockedBy."""
    with activity_span(names.FINISH_ATTEMPT, data) as step:
        return steps.finish_attempt(step, services())


@bp.activity_trigger(input_name="data", activity=names.PUBLISH_STATUS)
def publish_status(data: Any) -> None:
    """Send a status message to the client's reply queue."""
    with activity_span(names.PUBLISH_STATUS, data) as step:
        steps.publish_status(step, services())


@bp.activity_trigger(input_name="data", activity=names.ALERT_OPERATOR)
def alert_operator(data: Any) -> None:
    """Send an operator alert."""
    with activity_span(names.ALERT_OPERATOR, data) as step:
        steps.alert_operator(step, services())


@bp.activity_trigger(input_name="data", activity=names.RECORD_STEP)
def record_step(data: Any) -> dict[str, Any]:
    """Write a compensation log entry (S9)."""
    with activity_span(names.RECORD_STEP, data) as step:
        return compensation_steps.record_step(step, services())


@bp.activity_trigger(input_name="data", activity=names.FAIL_ORDER)
def fail_order(data: Any) -> dict[str, Any]:
    """Hand a failed order over to compensation, or set Error (S7, S9)."""
    with activity_span(names.FAIL_ORDER, data) as step:
        return compensation_steps.fail_order(step, services())


@bp.activity_trigger(input_name="data", activity=names.BEGIN_COMPENSATION)
def begin_compensation(data: Any) -> dict[str, Any]:
    """Set CompleteBy of a compensation attempt, fenced on LockedBy (S9)."""
    with activity_span(names.BEGIN_COMPENSATION, data) as step:
        return compensation_steps.begin_compensation(step, services())


@bp.activity_trigger(input_name="orderId", activity=names.PENDING_UNDOS)
def pending_undos(orderId: Any) -> list[dict[str, Any]]:  # noqa: N803 - binding name is the wire name
    """Read the logged steps still to undo, newest first (S9)."""
    with activity_span(names.PENDING_UNDOS, orderId) as step:
        return compensation_steps.pending_undo_entries(step, services())


@bp.activity_trigger(input_name="data", activity=names.RELEASE_INVENTORY)
def release_inventory(data: Any) -> dict[str, Any]:
    """Release the order's reservation (local undo step)."""
    with activity_span(names.RELEASE_INVENTORY, data) as step:
        return compensation_steps.release_inventory(step, services())


@bp.activity_trigger(input_name="data", activity=names.FINISH_COMPENSATION)
def finish_compensation(data: Any) -> dict[str, Any]:
    """Set Compensated or CompensationFailed, fenced on LockedBy (S9)."""
    with activity_span(names.FINISH_COMPENSATION, data) as step:
        return compensation_steps.finish_compensation(step, services())
