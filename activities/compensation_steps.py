"""Activities of compensation (S9) as plain functions of their input and the services.

Each is idempotent (X7), validates ``data`` with its contract from
:mod:`orders.models.compensation_io` (``pydantic.ValidationError`` if broken) and returns
its result contract's JSON form.
"""

from __future__ import annotations

from typing import Any, Literal

from activities.declared import implements
from orders.compensation.plan import pending_undos, step_details
from orders.lifecycle.changes import (
    cut_reason,
    fail_without_undo,
    hand_over,
    set_deadline,
)
from orders.lifecycle.changes import (
    finish_compensation as finished,
)
from orders.lifecycle.fencing import FencedError, fenced_finish, fenced_or_none, fenced_update
from orders.lifecycle.transitions import Actor
from orders.models import CompensationEntry, ProcessState, StateRecord
from orders.models.activities import (
    BEGIN_COMPENSATION,
    FAIL_ORDER,
    FINISH_COMPENSATION,
    PENDING_UNDOS,
    RECORD_STEP,
    RELEASE_INVENTORY,
)
from orders.models.compensation import ReservationDetails, ReservedLine, Step, UndoOutcome
from orders.models.compensation_io import (
    BeginCompensationInput,
    BeginCompensationResult,
    FailOrderInput,
    FailOrderResult,
    FencedResult,
    FinishCompensationInput,
    RecordStepInput,
    RecordStepResult,
    ReleaseInventoryInput,
    ReleaseInventoryResult,
)
from orders.models.inventory import hold_key
from orders.observability import metrics
from orders.runtime import Services


@implements(RECORD_STEP)
def record_step(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Write the log entry of a completed step or undo; a rerun returns the stored ``seq``.

    Raises KeyError or ValidationError if ``result`` lacks what the undo needs or holds card
    data, ConflictError if the step is logged with other details.
    """
    step = RecordStepInput.model_validate(data)
    seq, created = log_step(services, step.order_key, step.instance_id, step.workflow_version,
                            step.step, step.result, step.outcome)
    return RecordStepResult(seq=seq, created=created).model_dump(mode="json")


def log_step(services: Services, order_key: str, instance_id: str, workflow_version: int,
             step: Step, result: dict[str, Any] | None,
             outcome: UndoOutcome | None = None) -> tuple[int, bool]:
    """Write a step's log entry (idempotent on OrderID + step); return its seq and created."""
    stored = services.stores.compensation.record(step_entry(
        services, order_key, instance_id, workflow_version, step, result, outcome))
    seq = stored.record.seq
    assert seq is not None, "the log numbers every entry it stores"
    return seq, stored.created


def step_entry(services: Services, order_key: str, instance_id: str, workflow_version: int,
               step: Step, result: dict[str, Any] | None,
               outcome: UndoOutcome | None = None) -> CompensationEntry:
    """Build a step's log entry from its result (:func:`step_details`), not yet written.

    Raises KeyError or ValidationError as :func:`record_step`.
    """
    return CompensationEntry.new(order_key, step_details(step, result, outcome),
                                 instance_id=instance_id, workflow_version=workflow_version,
                                 now=services.clock.now())


@implements(FAIL_ORDER)
def fail_order(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Hand a failed order to compensation, or set Error if nothing is to undo (S4, S7).

    A rerun recognises its own ``failureReason`` (it names the attempt) and answers alike.
    """
    step = FailOrderInput.model_validate(data)
    order_key, reason = step.order_key, step.reason
    log = services.stores.compensation
    tell_by = services.clock.now() + services.settings.status_grace

    def change(record: StateRecord) -> StateRecord:
        if pending_undos(log.entries(order_key)):
            return hand_over(record, reason, Actor.ORDER_WORKFLOW)
        return fail_without_undo(record, reason, Actor.ORDER_WORKFLOW, tell_by)

    record: StateRecord | None
    try:
        record = fenced_update(services.stores.states, order_key, step.instance_id, change)
    except FencedError:
        record = services.stores.states.get(order_key)
        if record is None or record.failure_reason != cut_reason(reason):
            return FailOrderResult(fenced=True, state=None).model_dump(mode="json")
    state: Literal["Compensating", "Error"] = (
        "Error" if record.process_state is ProcessState.ERROR else "Compensating")
    return FailOrderResult(fenced=False, state=state).model_dump(mode="json")


@implements(BEGIN_COMPENSATION)
def begin_compensation(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set CompleteBy of a compensation attempt if it owns the record (S4, S9)."""
    step = BeginCompensationInput.model_validate(data)
    record = fenced_or_none(
        services.stores.states, step.order_key, step.instance_id,
        lambda r: set_deadline(r, step.complete_by, Actor.COMPENSATION_WORKFLOW))
    if record is None:
        return BeginCompensationResult(fenced=True, reply_to=None,
                                       failure_reason=None).model_dump(mode="json")
    return BeginCompensationResult(fenced=False, reply_to=record.status_queue,
                                   failure_reason=record.failure_reason
                                   ).model_dump(mode="json")


@implements(PENDING_UNDOS)
def pending_undo_entries(order_key: str, services: Services) -> list[dict[str, Any]]:
    """Return the logged steps still to undo, newest first (S9); takes the order key."""
    entries = pending_undos(services.stores.compensation.entries(order_key))
    return [entry.model_dump(mode="json") for entry in entries]


@implements(RELEASE_INVENTORY)
def release_inventory(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Give back what each line's hold took and remove the hold (S9, X7).

    Lines are those of the reserve entry, one write per SKU; see docs/inventory.md for
    orders reserved before the inventory was real.
    """
    step = ReleaseInventoryInput.model_validate(data)
    entries = services.stores.compensation.entries(step.order_key)
    reserved = next((e.details.lines for e in entries
                     if isinstance(e.details, ReservationDetails)), ())
    given = services.stores.inventory.release_lines(
        [(line.sku, hold_key(step.order_key, index)) for index, line in enumerate(reserved)])
    released = [ReservedLine(sku=line.sku, quantity=units)
                for line, units in zip(reserved, given, strict=True) if units]
    return ReleaseInventoryResult(reservation_id=step.reservation_id,
                                  released=tuple(released)).model_dump(mode="json")


@implements(FINISH_COMPENSATION)
def finish_compensation(data: dict[str, Any], services: Services) -> dict[str, Any]:
    """Set Compensated or CompensationFailed if the attempt still owns the record (S4, S9)."""
    step = FinishCompensationInput.model_validate(data)
    state = ProcessState(step.state)
    tell_by = services.clock.now() + services.settings.status_grace
    if fenced_finish(services.stores.states, step.order_key, step.instance_id,
                     lambda r: finished(r, state, tell_by), state):
        return FencedResult(fenced=True).model_dump(mode="json")
    # Counted here, where the state is written once, not in the orchestrator (replays).
    metrics.record_compensation("compensated" if state is ProcessState.COMPENSATED
                                else "failed")
    return FencedResult(fenced=False).model_dump(mode="json")
