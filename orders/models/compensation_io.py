"""Contracts of the compensation workflow and of the compensation log's activities (SPEC S9).

Activity by activity (input -> result):

- ``record_step`` (both workflows): :class:`RecordStepInput` -> :class:`RecordStepResult`;
  versions 3 and 4 log a confirmed step inside their next activity (:class:`ConfirmedStep`).
- ``fail_order`` (order workflow): :class:`FailOrderInput` -> :class:`FailOrderResult`.
- ``begin_compensation``: :class:`BeginCompensationInput` ->
  :class:`BeginCompensationResult`.
- ``pending_undos``: the OrderID as a bare JSON string -> a list of
  :class:`~orders.models.compensation.CompensationEntry` (:data:`PENDING_UNDOS_RESULT`).
- ``release_inventory``: :class:`ReleaseInventoryInput` -> :class:`ReleaseInventoryResult`.
- ``finish_compensation``: :class:`FinishCompensationInput` ->
  :class:`~orders.models.step_io.FencedResult`.

Compatibility rules: :mod:`orders.models.step_io`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, TypeAdapter

from orders.models._types import InstanceId, OrderKey, QueueName
from orders.models.compensation import CompensationEntry, ReservedLine, Step, UndoOutcome
from orders.models.step_io import (
    BeginInput,
    BeginResult,
    FencedResult,
    LeftForSupervisor,
    OwnedRecordInput,
    StepContract,
    Superseded,
)


class CompensationWorkflowInput(StepContract):
    """Input of one compensation attempt, built by the compensation starter (SPEC S9, D4).

    Attributes
    ----------
    order_id : str
        The order to undo.
    workflow_version : int
        The order's workflow version, written into the log entries of its undos (X6).
    deadline_s : float
        Seconds from the attempt's start to its CompleteBy.
    agent_max_attempts : int
        Calls an agent may make per undo request.
    trace_parent : str or None
        W3C ``traceparent`` of the compensation attempt's start: its activities' spans
        are children of it (SPEC X8). Absent in inputs written before traces.
    """

    OMIT_IF_NONE = frozenset({"trace_parent"})

    order_id: OrderKey
    workflow_version: int = Field(ge=1)
    deadline_s: float = Field(gt=0)
    agent_max_attempts: int = Field(ge=1, le=100)
    trace_parent: str | None = Field(default=None, max_length=55)


class RecordStepInput(StepContract):
    """Input of ``record_step``: the log entry of a completed step or undo (SPEC S9, X7).

    Attributes
    ----------
    order_id, instance_id : str
        The order and the writing attempt.
    workflow_version : int
        The order's workflow version.
    step : Step
        The completed step or undo; it keys the entry (idempotent on OrderID + step).
    result : dict or None
        The local step's result or the service's answer, in the shape the service defines:
        only the fields the undo needs are kept, and the log entry's details refuse
        anything else (:func:`orders.compensation.plan.step_details`). None when the
        service had nothing to undo.
    outcome : UndoOutcome or None
        For an undo: Undone or NothingToUndo. Absent for a forward step.
    """

    OMIT_IF_NONE = frozenset({"outcome"})

    order_id: OrderKey
    instance_id: InstanceId
    workflow_version: int = Field(ge=1)
    step: Step
    result: dict[str, Any] | None = None
    outcome: UndoOutcome | None = None


class RecordStepResult(StepContract):
    """Result of ``record_step``.

    Attributes
    ----------
    seq : int
        The entry's place in the order's log; a rerun returns the stored one.
    created : bool
        False for a rerun that found the entry.
    """

    seq: int = Field(ge=1)
    created: bool


class ConfirmedStep(StepContract):
    """A completed forward step's log entry, written by the next activity (version 3+, S9).

    Attributes
    ----------
    step : Step
        The completed step; keys the entry as ``record_step`` does.
    result : dict or None
        The service's answer, as for :class:`RecordStepInput`.
    """

    step: Step
    result: dict[str, Any] | None = None


class FailOrderInput(OwnedRecordInput):
    """Input of ``fail_order``: hand a failed order to compensation, or set Error (S7, S9).

    Attributes
    ----------
    reason : str
        Why, naming the attempt (a rerun recognises its own write by it).
    """

    reason: str = Field(min_length=1)


class FailOrderResult(StepContract):
    """Result of ``fail_order``.

    Attributes
    ----------
    fenced : bool
        True if another instance owns the record (nothing written).
    state : {"Compensating", "Error"} or None
        The state written; None when fenced.
    """

    fenced: bool
    state: Literal["Compensating", "Error"] | None


class BeginCompensationInput(BeginInput):
    """Input of ``begin_compensation``: set CompleteBy while the attempt owns the record.

    Its attributes are those of :class:`~orders.models.step_io.BeginInput`.
    """


class BeginCompensationResult(BeginResult):
    """Result of ``begin_compensation``: that of :class:`~orders.models.step_io.BeginResult`.

    ``replyTo`` is required here (it has been since the contract existed).

    Attributes
    ----------
    failure_reason : str or None
        Why the order failed, for the client and the operators; None when fenced.
    """

    reply_to: QueueName | None
    failure_reason: str | None


PENDING_UNDOS_RESULT: TypeAdapter[list[CompensationEntry]] = TypeAdapter(
    list[CompensationEntry])
"""Result of ``pending_undos``: the log entries still to undo, newest first."""


class ReleaseInventoryInput(StepContract):
    """Input of ``release_inventory``: the reservation to release (undoes reserve inventory).

    Attributes
    ----------
    order_id : str
        The order.
    reservation_id : str
        From the reserve inventory entry; releasing twice releases once (SPEC X7).
    """

    order_id: OrderKey
    reservation_id: str = Field(min_length=1, max_length=128)


class ReleaseInventoryResult(StepContract):
    """Result of ``release_inventory``: the reservation released.

    Attributes
    ----------
    reservation_id : str
        The reservation.
    released : tuple of ReservedLine or None
        SKU and units given back, per line that gave any (empty: nothing was held); None in
        results of releases before the inventory was real.
    """

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"released"})

    reservation_id: str = Field(min_length=1, max_length=128)
    released: tuple[ReservedLine, ...] | None = Field(default=None, max_length=1000)


class FinishCompensationInput(OwnedRecordInput):
    """Input of ``finish_compensation``: the compensation's final state (SPEC S4, S9).

    Attributes
    ----------
    state : {"Compensated", "CompensationFailed"}
        The final state to write.
    """

    state: Literal["Compensated", "CompensationFailed"]


class CompensationEnded(StepContract):
    """Compensation output: the final state was written and the client told.

    Attributes
    ----------
    outcome : {"compensated", "compensationFailed"}
        Every step undone (or nothing to undo), or an undo was refused.
    detail : str
        What was undone, or what was refused.
    """

    outcome: Literal["compensated", "compensationFailed"]
    detail: str


CompensationOutcome = Annotated[
    CompensationEnded | Superseded | LeftForSupervisor, Field(discriminator="outcome")]
"""Output of a compensation attempt, told apart by ``outcome``."""

COMPENSATION_OUTCOME: TypeAdapter[CompensationOutcome] = TypeAdapter(CompensationOutcome)
"""Validates a compensation attempt's output."""

__all__ = [
    "COMPENSATION_OUTCOME",
    "PENDING_UNDOS_RESULT",
    "BeginCompensationInput",
    "BeginCompensationResult",
    "CompensationEnded",
    "CompensationOutcome",
    "CompensationWorkflowInput",
    "FailOrderInput",
    "FailOrderResult",
    "FencedResult",
    "FinishCompensationInput",
    "RecordStepInput",
    "RecordStepResult",
    "ReleaseInventoryInput",
    "ReleaseInventoryResult",
]
