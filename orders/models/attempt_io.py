"""Contracts of the order workflow: its input, output and own activities (S5-S7).

``load_order`` takes the order key as a JSON string and returns an
:class:`~orders.models.order.Order`. Activity names: :mod:`orders.models.activities`;
compatibility rules: :mod:`orders.models.step_io`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, TypeAdapter, model_validator

from orders.models._types import OrderKey, QueueName
from orders.models.compensation import ReservedLine
from orders.models.compensation_io import ConfirmedStep
from orders.models.inventory import OutOfStock
from orders.models.order import Order, OrderLine
from orders.models.step_io import (
    BeginInput,
    BeginResult,
    FencedResult,
    LeftForSupervisor,
    OwnedRecordInput,
    StepContract,
    Superseded,
)

FIRST_WORKFLOW_VERSION = 1
"""Version of an attempt whose input has no ``workflowVersion`` (before X6)."""


class OrderWorkflowInput(StepContract):
    """Input of one order workflow attempt (S3, D4, X6); settings travel in it for replay.

    ``attempt`` is informational; ``deadline_s`` runs from the attempt's start to CompleteBy.
    """

    OMIT_IF_NONE = frozenset({"attempt", "trace_parent"})

    order_key: OrderKey = Field(alias="orderId")
    attempt: int | None = Field(default=None, ge=1)
    workflow_version: int = FIRST_WORKFLOW_VERSION
    deadline_s: float = Field(gt=0)
    agent_max_attempts: int = Field(ge=1, le=100)
    trace_parent: str | None = Field(default=None, max_length=55)


class ReserveInventoryInput(StepContract):
    """Input of ``reserve_inventory``: the order's lines as the order database holds them."""

    order_key: OrderKey = Field(alias="orderId")
    lines: tuple[OrderLine, ...] = Field(min_length=1, max_length=1000)


class ReserveInventoryResult(StepContract):
    """Result of ``reserve_inventory``: what release needs (S9).

    ``out_of_stock`` is the first line not reserved (permanent; lines before it stay held
    until compensation).
    """

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"out_of_stock"})

    reservation_id: str = Field(min_length=1, max_length=128)
    lines: tuple[ReservedLine, ...] = Field(min_length=1, max_length=1000)
    out_of_stock: OutOfStock | None = None


class BeginAttemptInput(BeginInput):
    """Input of ``begin_attempt``: set CompleteBy while the attempt owns the record (S4, S5).

    ``load_order`` (versions 3 to 6): also read the order, as ``load_order`` does;
    ``reserve`` (versions 5, 6; needs ``load_order``): then reserve its lines, as
    ``reserve_inventory`` does.
    """

    OMIT_IF_NONE = frozenset({"load_order", "reserve"})

    load_order: bool | None = None
    reserve: bool | None = None

    @model_validator(mode="after")
    def _reserve_needs_the_order(self) -> BeginAttemptInput:
        if self.reserve and not self.load_order:
            raise ValueError("reserve: needs loadOrder, since the lines reserved are the order's")
        return self


class BeginAttemptResult(BeginResult):
    """Result of ``begin_attempt``; ``order`` and ``reservation`` when asked and not fenced."""

    OMIT_IF_NONE = frozenset({"order", "reservation"})

    order: Order | None = None
    reservation: ReserveInventoryResult | None = None


class FinishAttemptInput(OwnedRecordInput):
    """Input of ``finish_attempt``: set Processed while owning the record (S4, S6); never Error.

    Versions 3 to 6: ``confirmed`` is the last step's entry (logged first, fenced or not,
    with ``workflow_version``); ``reply_to`` is told "OrderCompleted" unless fenced.
    """

    OMIT_IF_NONE = frozenset({"confirmed", "workflow_version", "reply_to"})

    state: Literal["Processed"]
    confirmed: ConfirmedStep | None = None
    workflow_version: int | None = Field(default=None, ge=1)
    reply_to: QueueName | None = None

    @model_validator(mode="after")
    def _version_with_entry(self) -> FinishAttemptInput:
        if self.confirmed is not None and self.workflow_version is None:
            raise ValueError("workflowVersion: required with confirmed")
        return self


class Processed(StepContract):
    """Workflow output: every step done, the record Processed, the client told."""

    outcome: Literal["processed"] = "processed"


class Failed(StepContract):
    """Workflow output: a step failed permanently (S7); ``error`` if nothing was to undo."""

    outcome: Literal["error", "compensating"]
    step: str
    reason: str | None


class UnknownWorkflowVersion(StepContract):
    """Workflow output: the input names a version this deployment does not run (X6)."""

    outcome: Literal["unknownWorkflowVersion"] = "unknownWorkflowVersion"


AttemptOutcome = Annotated[
    Processed | Superseded | LeftForSupervisor | Failed | UnknownWorkflowVersion,
    Field(discriminator="outcome"),
]

ATTEMPT_OUTCOME: TypeAdapter[AttemptOutcome] = TypeAdapter(AttemptOutcome)

__all__ = [
    "ATTEMPT_OUTCOME",
    "FIRST_WORKFLOW_VERSION",
    "AttemptOutcome",
    "BeginAttemptInput",
    "BeginAttemptResult",
    "Failed",
    "FencedResult",
    "FinishAttemptInput",
    "OrderWorkflowInput",
    "Processed",
    "ReserveInventoryInput",
    "ReserveInventoryResult",
    "UnknownWorkflowVersion",
]
