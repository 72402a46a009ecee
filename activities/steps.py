"""The order workflow's activities as plain functions of their input and the services.

Each validates ``data`` with its input contract (``pydantic.ValidationError`` if broken)
and returns its result contract's JSON form; tests may call them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from activities.compensation_steps import log_step, step_entry
from activities.declared import implements
from orders.compensation.plan import request_details
from orders.lifecycle.changes import complete, set_deadline
from orders.lifecycle.fencing import FencedError, fenced_or_none, finished_record
from orders.lifecycle.ids import client_order_id
from orders.lifecycle.transitions import Actor
from orders.messaging import OutgoingMessage
from orders.models import CompensationEntry, Order, OrderLine, ProcessState, StateRecord
from orders.models.activities import (
    ALERT_OPERATOR,
    BEGIN_ATTEMPT,
    FINISH_ATTEMPT,
    LOAD_ORDER,
    PUBLISH_STATUS,
    RESERVE_INVENTORY,
    SEND_AGENT_REQUEST,
)
from orders.models.agent_io import SendAgentRequestInput
from orders.models.attempt_io import (
    BeginAttemptInput,
    BeginAttemptResult,
    FencedResult,
    FinishAttemptInput,
    ReserveInventoryInput,
    ReserveInventoryResult,
)
from orders.models.compensation import ReservationDetails, ReservedLine, Step
from orders.models.inventory import OutOfStock, hold_key
from orders.models.messages import OperatorAlert, StatusKind, StatusMessage
from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from orders.names import REQUEST_QUEUES
from orders.notify import send_alert, send_final_status, send_status
from orders.observability import metrics
from orders.remote_steps import RemoteStep
from orders.runtime import Services
from orders.stores.inventory import Reserved


@implements(BEGIN_ATTEMPT)
def begin_attempt(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set CompleteBy of the attempt if it still owns the record (S4, S5).

    Not fenced: with ``loadOrder`` (versions 3 to 8) the result holds the order, read after
    the write (LookupError as ``load_order``); with ``reserve`` (versions 5 to 8) also the
    reservation of its lines, made as ``reserve_inventory`` makes it; with ``sendFirst``
    (versions 7, 8) and every line held, the first remote step is then logged as
    *requested* and sent as ``send_agent_request`` does, its MessageId in ``sent``. Each
    part is idempotent, so a rerun repeats none of its effects (X7).
    """
    step = BeginAttemptInput.model_validate(data)
    record = fenced_or_none(services.stores.states, step.order_key, step.instance_id,
                            lambda r: set_deadline(r, step.complete_by, Actor.ORDER_WORKFLOW))
    if record is None:
        return BeginAttemptResult(fenced=True).model_dump(mode="json")
    order = _order(step.order_key, services) if step.load_order else None
    answer = BeginAttemptResult(fenced=False, reply_to=record.status_queue,
                                order=order).model_dump(mode="json")
    if order is None or not step.reserve:
        return answer
    # The reserve contract's JSON form, built once.
    try:
        reservation = _reserve(step.order_key, order.lines, services,
                               instance_id=step.instance_id, version=record.workflow_version)
    except FencedError:
        return BeginAttemptResult(fenced=True).model_dump(mode="json")
    answer["reservation"] = reservation
    first = step.send_first
    if first is not None and "outOfStock" not in reservation:
        request = RemoteStep(first.service, first.operation).request(
            step.instance_id, order, step.complete_by, first.max_attempts)
        answer["sent"] = _log_and_send(services, SendAgentRequestInput.of(
            request, record.workflow_version))
    return answer


@implements(LOAD_ORDER)
def load_order(order_key: str, services: Services) -> dict[str, Any]:
    """Read the order (S5); LookupError if missing (a broken dual write: the attempt retries)."""
    return _order(order_key, services).model_dump(mode="json")


def _order(order_key: str, services: Services) -> Order:
    """Read the order, or raise ``LookupError`` naming it."""
    order = services.stores.orders.get(order_key)
    if order is None:
        raise LookupError(f"orderId: no order {order_key} in the order database")
    return order


@implements(RESERVE_INVENTORY)
def reserve_inventory(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Reserve the order's lines in the local inventory (X7); see docs/inventory.md.

    Raises LookupError if no attempt owns the record, or it lost the record while reserving
    (what it took is given back); the rest as :func:`_reserve`.
    """
    step = ReserveInventoryInput.model_validate(data)
    record = services.stores.states.get(step.order_key)
    if record is None or record.locked_by is None:
        raise LookupError(f"orderId: no attempt owns order {step.order_key}; nothing reserved")
    try:
        return _reserve(step.order_key, step.lines, services, instance_id=record.locked_by,
                        version=record.workflow_version)
    except FencedError as exc:
        raise LookupError(f"orderId: {exc}") from None


def _reserve(order_key: str, lines: Sequence[OrderLine], services: Services, *,
             instance_id: str, version: int) -> dict[str, Any]:
    """Log the reserve entry of the attempt, then reserve ``lines``; the result's JSON form.

    The entry comes first, so compensation releases whatever is left held; a rerun reserves
    only lines without a hold. Lines are held by ``instance_id``; if it took any, the record
    is read again and, should ``instance_id`` no longer own it (a compensation or a later
    attempt may have settled or released the lines meanwhile), what it took is given back
    (docs/inventory.md, "Late reservations").

    Raises
    ------
    FencedError
        If ``instance_id`` lost the record while reserving; nothing of its own stays held.
    ValueError
        If compensation already released a line (a tombstone of older code).
    TransientStoreError
        If contended.
    """
    reserved = tuple(ReservedLine(sku=line.sku, quantity=line.quantity) for line in lines)
    result = ReserveInventoryResult(reservation_id=f"RES-{order_key}", lines=reserved)
    answer = result.model_dump(mode="json")  # once: the entry's details and the answer
    services.stores.compensation.record(CompensationEntry.new(
        order_key, {"step": Step.RESERVE_INVENTORY.value, **answer},
        instance_id=instance_id, workflow_version=version, now=services.clock.now()))
    wanted = [(line.sku, hold_key(order_key, index), line.quantity)
              for index, line in enumerate(lines)]
    results = services.stores.inventory.reserve_lines(wanted, by=instance_id)
    if any(got.outcome is Reserved.RESERVED for got in results):
        _still_owned(order_key, wanted, services, instance_id)
    for index, got in enumerate(results):
        line = lines[index]
        if got.outcome is Reserved.OUT_OF_STOCK:
            missing = OutOfStock(sku=line.sku, line=index, requested=line.quantity,
                                 available=got.available)
            metrics.record_out_of_stock()
            return {**answer, "outOfStock": missing.model_dump(mode="json")}
        if got.outcome is Reserved.RELEASED:
            raise ValueError(f"lines[{index}]: the reservation of order {order_key} was "
                             "released by its compensation; it is not reserved again")
    return answer


def _still_owned(order_key: str, lines: Sequence[tuple[str, str, int]], services: Services,
                 instance_id: str) -> None:
    """Give back what ``instance_id`` took unless it still owns the Processing record.

    Raises FencedError if it does not.
    """
    record = services.stores.states.get(order_key)
    if (record is not None and record.locked_by == instance_id
            and record.process_state is ProcessState.PROCESSING):
        return
    units = services.stores.inventory.undo([(sku, key) for sku, key, _ in lines], instance_id)
    raise FencedError(f"order {order_key} is no longer {instance_id}'s; the {units} units it "
                      "had just reserved were given back")


def settle_reservation(order_key: str, services: Services) -> int:
    """Settle a Processed order's holds: they leave the stock items for good; the units.

    Best effort: the holds of an order left unsettled still balance the stock
    (``held`` + ``consumed``), they only take room in the item.
    """
    entries = services.stores.compensation.entries(order_key)
    reserved = next((e.details.lines for e in entries
                     if isinstance(e.details, ReservationDetails)), ())
    return services.stores.inventory.settle_lines(
        [(line.sku, hold_key(order_key, index)) for index, line in enumerate(reserved)])


@implements(SEND_AGENT_REQUEST)
def send_agent_request(data: dict[str, Any], services: Services) -> str:
    """Log a remote forward step as *requested*, then send it to its agent (S9, A1, A4).

    A ``confirmed`` previous step (versions 3 to 8) is logged first, as ``record_step`` does,
    in the same write as the *requested* entry (``record_all``). Returns the MessageId.
    Raises ConflictError if logged with another key or amount.
    """
    return _log_and_send(services, SendAgentRequestInput.model_validate(data))


def _log_and_send(services: Services, request: SendAgentRequestInput) -> str:
    """Log ``request`` (and its ``confirmed`` step) as :func:`send_agent_request` says, send it.

    Returns the MessageId; ConflictError if logged with another key or amount.
    """
    details = request_details(request)
    entries = []
    if request.confirmed is not None:
        if request.workflow_version is None:
            raise ValueError("workflowVersion: required with confirmed")
        entries.append(step_entry(services, request.order_key, request.instance_id,
                                  request.workflow_version, request.confirmed.step,
                                  request.confirmed.result))
    if details is not None:
        version = request.workflow_version
        if version is None:
            record = services.stores.states.get(request.order_key)
            version = record.workflow_version if record is not None else 1
        entries.append(CompensationEntry.new(
            request.order_key, details, instance_id=request.instance_id,
            workflow_version=version, now=services.clock.now()))
    # One write: the confirmed entry before the requested one, both before the send.
    services.stores.compensation.record_all(entries)
    services.sender.send(REQUEST_QUEUES[request.service], OutgoingMessage(
        body=request.queue_body(), message_id=request.message_id,
        application_properties={"orderId": request.order_key,
                                "operation": request.operation}))
    return request.message_id


@implements(FINISH_ATTEMPT)
def finish_attempt(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set Processed if the attempt still owns the record (S4, S6); a rerun is not fenced.

    Versions 3 to 8: ``confirmed`` (the last step) is logged first, fenced or not. Not
    fenced, the order's holds are then settled (:func:`settle_reservation`) and, with
    ``replyTo``, "OrderCompleted" is sent as ``publish_status`` does.
    """
    step = FinishAttemptInput.model_validate(data)
    if step.confirmed is not None:
        assert step.workflow_version is not None, "the contract requires it with confirmed"
        log_step(services, step.order_key, step.instance_id, step.workflow_version,
                 step.confirmed.step, step.confirmed.result)
    tell_by = services.clock.now() + services.settings.status_grace
    record = finished_record(services.stores.states, step.order_key, step.instance_id,
                             lambda r: complete(r, tell_by), ProcessState.PROCESSED)
    if record is not None:
        settle_reservation(step.order_key, services)
    if record is not None and step.reply_to is not None:
        _publish(services, PublishStatusInput(
            order_key=step.order_key, instance_id=step.instance_id, reply_to=step.reply_to,
            status=StatusKind.ORDER_COMPLETED), written=record)
    return FencedResult(fenced=record is None).model_dump(mode="json")


@implements(PUBLISH_STATUS)
def publish_status(data: dict[str, Any], services: Services) -> None:
    """Send a final status to the order's reply queue, by the client's OrderID (S8).

    A failed send stays pending for the supervisor (:func:`orders.notify.send_final_status`)
    and the step succeeds, so the orchestration ends as its order did.
    """
    _publish(services, PublishStatusInput.model_validate(data))


def _publish(services: Services, step: PublishStatusInput,
             written: StateRecord | None = None) -> None:
    """Send one status (:func:`publish_status`); ``written`` as ``send_final_status`` takes it."""
    message = StatusMessage(order_id=client_order_id(step.order_key), status=step.status,
                            at=services.clock.now(), reason=step.reason)
    if step.instance_id is None:  # an input from before instance ids were passed
        send_status(services.sender, step.reply_to, message)
        return
    actor = (Actor.COMPENSATION_WORKFLOW
             if step.status in (StatusKind.COMPENSATED, StatusKind.COMPENSATION_FAILED)
             else Actor.ORDER_WORKFLOW)
    send_final_status(services.stores.states, services.sender, step.order_key, step.reply_to,
                      message, instance_id=step.instance_id, actor=actor, written=written)


@implements(ALERT_OPERATOR)
def alert_operator(data: dict[str, Any], services: Services) -> None:
    """Send an operator alert (S7): one per client, kind and window (:func:`send_alert`).

    An alert about no client's order, or a ``CompensationFailed``, is one per instance and
    kind.
    """
    step = AlertOperatorInput.model_validate(data)
    alert = OperatorAlert(kind=step.kind, reason=step.reason, at=services.clock.now(),
                          order_key=step.order_key, instance_id=step.instance_id)
    send_alert(services.sender, alert,
               message_id=f"{step.kind}:{step.instance_id or step.order_key}")


__all__ = ["FencedError", "alert_operator", "begin_attempt", "finish_attempt", "load_order",
           "publish_status", "reserve_inventory", "send_agent_request"]
