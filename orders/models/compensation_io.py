"""Contracts of the compensation workflow and the compensation log's activities (S9).

Compatibility rules: :mod:`orders.models.step_io`; activity names: :mod:`orders.models.activities`.
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
from orders.names import COMPENSATION_VERSIONS


class CompensationWorkflowInput(StepContract):
    """Input of one compensation attempt (S9, D4); ``deadline_s``: from its start to CompleteBy.

    ``workflow_version`` is the order's; ``compensation_version`` the compensation
    workflow's own (``orders.names.COMPENSATION_VERSIONS``), absent (None: version 1) in
    inputs written before it, so their wire form is kept.
    """

    OMIT_IF_NONE = frozenset({"trace_parent", "compensation_version"})

    order_key: OrderKey = Field(alias="orderId")
    workflow_version: int = Field(ge=1)
    compensation_version: int | None = Field(default=None, ge=2, le=COMPENSATION_VERSIONS[-1])
    deadline_s: float = Field(gt=0)
    agent_max_attempts: int = Field(ge=1, le=100)
    trace_parent: str | None = Field(default=None, max_length=55)


class RecordStepInput(StepContract):
    """Input of ``record_step``: a completed step or undo, idempotent on order key + step (S9, X7).

    ``result`` keeps only what the undo needs (:func:`orders.compensation.plan.step_details`);
    ``outcome`` is set for an undo only.
    """

    OMIT_IF_NONE = frozenset({"outcome"})

    order_key: OrderKey = Field(alias="orderId")
    instance_id: InstanceId
    workflow_version: int = Field(ge=1)
    step: Step
    result: dict[str, Any] | None = None
    outcome: UndoOutcome | None = None


class RecordStepResult(StepContract):
    """Result of ``record_step``; a rerun returns the stored ``seq`` and ``created`` False."""

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
    """Input of ``fail_order`` (S7, S9); ``reason`` names the attempt, so a rerun knows it."""

    reason: str = Field(min_length=1)


class FailOrderResult(StepContract):
    """Result of ``fail_order``: ``state`` written, or None when ``fenced``."""

    fenced: bool
    state: Literal["Compensating", "Error"] | None


class BeginCompensationInput(BeginInput):
    """Input of ``begin_compensation``: set CompleteBy while the attempt owns the record."""


class BeginCompensationResult(BeginResult):
    """Result of ``begin_compensation``; ``failure_reason`` is None when fenced."""

    reply_to: QueueName | None
    failure_reason: str | None


PENDING_UNDOS_RESULT: TypeAdapter[list[CompensationEntry]] = TypeAdapter(
    list[CompensationEntry])
"""Result of ``pending_undos`` (input: the order key as JSON): entries, newest first."""


class ReleaseInventoryInput(StepContract):
    """Input of ``release_inventory``; releasing twice releases once (X7)."""

    order_key: OrderKey = Field(alias="orderId")
    reservation_id: str = Field(min_length=1, max_length=128)


class ReleaseInventoryResult(StepContract):
    """Result of ``release_inventory``; ``released`` empty if nothing was held, None if older."""

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"released"})

    reservation_id: str = Field(min_length=1, max_length=128)
    released: tuple[ReservedLine, ...] | None = Field(default=None, max_length=1000)


class FinishCompensationInput(OwnedRecordInput):
    """Input of ``finish_compensation``: the compensation's final state (S4, S9)."""

    state: Literal["Compensated", "CompensationFailed"]


class CompensationEnded(StepContract):
    """Compensation output: the final state was written and the client told."""

    outcome: Literal["compensated", "compensationFailed"]
    detail: str


CompensationOutcome = Annotated[
    CompensationEnded | Superseded | LeftForSupervisor, Field(discriminator="outcome")]

COMPENSATION_OUTCOME: TypeAdapter[CompensationOutcome] = TypeAdapter(CompensationOutcome)

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
