"""Contracts of the order workflow: its input, output and own activities (S5-S7).

``load_order`` takes the order key as a JSON string and returns an
:class:`~orders.models.order.Order`. Activity names: :mod:`orders.models.activities`;
compatibility rules: :mod:`orders.models.step_io`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, TypeAdapter, model_validator

from azurekit.services import catalogue
from orders.models._types import OrderKey, QueueName
from orders.models.compensation import ReservedLine
from orders.models.compensation_io import ConfirmedStep
from orders.models.inventory import OutOfStock
from orders.models.messages import Operation, Service
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


class FirstRequest(StepContract):
    """The first remote step of an attempt, which ``begin_attempt`` sends (versions 7, 8).

    The request is built from the order the activity reads, as the orchestrator builds the
    later ones (:meth:`orders.remote_steps.RemoteStep.request`), with
    ``max_attempts`` (the request's share of the X2 budget) and CompleteBy as its deadline.
    """

    service: Service
    operation: Operation
    max_attempts: int = Field(ge=1, le=100, strict=True)
    """Strict: ``true``, ``"3"`` or ``3.0`` is refused, not read as 1 or 3."""

    @model_validator(mode="after")
    def _a_forward_operation_of_the_service(self) -> FirstRequest:
        if self.operation not in catalogue().service(self.service).forward_operations:
            raise ValueError(f"sendFirst.operation: {self.operation!r} is not a forward "
                             f"operation of the {self.service} service in services.json")
        return self


class BeginAttemptInput(BeginInput):
    """Input of ``begin_attempt``: set CompleteBy while the attempt owns the record (S4, S5).

    ``load_order`` (versions 3 to 8): also read the order, as ``load_order`` does;
    ``reserve`` (versions 5 to 8; needs ``load_order``): then reserve its lines, as
    ``reserve_inventory`` does; ``send_first`` (versions 7, 8; needs ``reserve``): then,
    if every line is held, log the first remote step as *requested* and send it, as
    ``send_agent_request`` does.
    """

    OMIT_IF_NONE = frozenset({"load_order", "reserve", "send_first"})

    load_order: bool | None = None
    reserve: bool | None = None
    send_first: FirstRequest | None = None

    @model_validator(mode="after")
    def _reserve_needs_the_order(self) -> BeginAttemptInput:
        if self.reserve and not self.load_order:
            raise ValueError("reserve: needs loadOrder, since the lines reserved are the order's")
        if self.send_first is not None and not self.reserve:
            raise ValueError("sendFirst: needs reserve, since a request goes out only once "
                             "every line is held")
        return self


class BeginAttemptResult(BeginResult):
    """Result of ``begin_attempt``; ``order`` and ``reservation`` when asked and not fenced.

    ``sent``: the MessageId of the first remote step's request, when asked and every line
    was held.
    """

    OMIT_IF_NONE = frozenset({"order", "reservation", "sent"})

    order: Order | None = None
    reservation: ReserveInventoryResult | None = None
    sent: str | None = Field(default=None, min_length=1, max_length=128)


class FinishAttemptInput(OwnedRecordInput):
    """Input of ``finish_attempt``: set Processed while owning the record (S4, S6); never Error.

    Versions 3 to 8: ``confirmed`` is the last step's entry (logged first, fenced or not,
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
    "FirstRequest",
    "OrderWorkflowInput",
    "Processed",
    "ReserveInventoryInput",
    "ReserveInventoryResult",
    "UnknownWorkflowVersion",
]
