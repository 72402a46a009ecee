"""The workflow's activities as plain functions of their input and the services.

The blueprint (:mod:`activities.blueprint`) registers each one as an activity
function; tests may call them directly. Inputs and outputs are JSON-shaped dicts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from orders.compensation.plan import request_details
from orders.lifecycle.changes import complete, set_deadline
from orders.lifecycle.fencing import FencedError, fenced_update
from orders.lifecycle.transitions import Actor
from orders.messaging import OutgoingMessage
from orders.models import CompensationEntry, ProcessState
from orders.models.messages import AgentRequest, OperatorAlert, StatusKind, StatusMessage
from orders.names import REQUEST_QUEUES
from orders.notify import send_alert, send_status
from orders.runtime import Services


def begin_attempt(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set CompleteBy of the attempt if it still owns the record (SPEC S4, S5).

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "completeBy"}`` (ISO 8601 UTC).

    Returns
    -------
    dict
        ``{"fenced": bool, "replyTo": str | None}``.
    """
    try:
        record = fenced_update(
            services.stores.states, data["orderId"], data["instanceId"],
            lambda r: set_deadline(r, _parse_time(data["completeBy"]), Actor.ORDER_WORKFLOW))
    except FencedError:
        return {"fenced": True, "replyTo": None}
    return {"fenced": False, "replyTo": record.reply_to}


def load_order(order_id: str, services: Services) -> dict[str, Any]:
    """Read the order from the order database (SPEC S5).

    Raises
    ------
    LookupError
        If the order is missing (a broken dual write; the attempt fails and is retried).
    """
    order = services.stores.orders.get(order_id)
    if order is None:
        raise LookupError(f"orderId: no order {order_id} in the order database")
    return order.model_dump(mode="json")


def reserve_inventory(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Reserve the order's lines in the local inventory (a local step, no agent).

    Returns
    -------
    dict
        ``{"reservationId", "lines"}``: the reservation is keyed on OrderID, so a rerun
        reserves nothing twice (SPEC X7); compensation releases it by that id.
    """
    lines = [{"sku": line["sku"], "quantity": line["quantity"]} for line in data["lines"]]
    return {"reservationId": f"RES-{data['orderId']}", "lines": lines}


def send_agent_request(data: dict[str, Any], services: Services) -> str:
    """Log a remote forward step as requested, then send it to its agent (SPEC S9, A1, A4).

    The *requested* entry (with the idempotency key) is written before the message goes
    out, so compensation undoes the step even if no answer ever comes
    (:mod:`orders.compensation.plan`). Both writes are idempotent (SPEC X7): a rerun logs
    nothing new and sends the same MessageId, which the queue drops.

    Parameters
    ----------
    data : dict
        The :class:`AgentRequest` in JSON form, plus ``workflowVersion`` (int, optional:
        the order's workflow version for the log entry; read from the state record if
        absent).

    Returns
    -------
    str
        The MessageId.

    Raises
    ------
    pydantic.ValidationError
        If ``data`` is not a valid request.
    ConflictError
        If the step is logged as requested with another idempotency key or amount.
    """
    request = AgentRequest.model_validate(data)
    details = request_details(request)
    if details is not None:
        version = data.get("workflowVersion")
        if version is None:
            record = services.stores.states.get(request.order_id)
            version = record.workflow_version if record is not None else 1
        services.stores.compensation.record(CompensationEntry.new(
            request.order_id, details, instance_id=request.instance_id,
            workflow_version=version, now=services.clock.now()))
    services.sender.send(REQUEST_QUEUES[request.service], OutgoingMessage(
        body=request.model_dump(mode="json"), message_id=request.message_id,
        application_properties={"orderId": request.order_id,
                                "operation": request.operation}))
    return request.message_id


def finish_attempt(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set Processed if the attempt still owns the record (SPEC S4, S6).

    Parameters
    ----------
    data : dict
        ``{"orderId", "instanceId", "state": "Processed"}``.

    Returns
    -------
    dict
        ``{"fenced": bool}``: True if a newer attempt owns the record, or the supervisor
        already gave up on it (nothing written). A rerun that finds its own Processed is
        not fenced.

    Raises
    ------
    ValueError
        If ``state`` is not Processed (failures go through ``fail_order``).
    """
    if ProcessState(data["state"]) is not ProcessState.PROCESSED:
        raise ValueError(f"state: must be Processed; got {data['state']!r}")
    order_id, iid = data["orderId"], data["instanceId"]
    try:
        fenced_update(services.stores.states, order_id, iid, complete)
    except FencedError:
        record = services.stores.states.get(order_id)
        mine = (record is not None and record.locked_by == iid
                and record.process_state is ProcessState.PROCESSED)
        return {"fenced": not mine}
    return {"fenced": False}


def publish_status(data: dict[str, Any], services: Services) -> None:
    """Send a status message to the order's reply queue only (SPEC S8).

    The MessageId includes the instance id: a rerun of this step sends a duplicate the
    queue drops, while a resubmitted order that fails again is still told.
    """
    message = StatusMessage(order_id=data["orderId"], status=StatusKind(data["status"]),
                            at=services.clock.now(), reason=data.get("reason"))
    suffix = f":{data['instanceId']}" if data.get("instanceId") else ""
    send_status(services.sender, data["replyTo"], message, dedupe_suffix=suffix)


def alert_operator(data: dict[str, Any], services: Services) -> None:
    """Send an operator alert (SPEC S7); one per instance and kind."""
    alert = OperatorAlert(kind=data["kind"], reason=data["reason"], at=services.clock.now(),
                          order_id=data.get("orderId"), instance_id=data.get("instanceId"))
    send_alert(services.sender, alert,
               message_id=f"{data['kind']}:{data.get('instanceId') or data.get('orderId')}")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


__all__ = ["FencedError", "alert_operator", "begin_attempt", "finish_attempt", "load_order",
           "publish_status", "reserve_inventory", "send_agent_request"]
