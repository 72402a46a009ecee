"""Contracts of the order workflow: its input, its output and its own activities (SPEC S5-S7).

Activity by activity (input -> result):

- ``begin_attempt``: :class:`BeginAttemptInput` -> :class:`BeginAttemptResult`.
- ``load_order``: the OrderID as a bare JSON string -> :class:`~orders.models.order.Order`
  (the order database's own contract).
- ``reserve_inventory``: :class:`ReserveInventoryInput` -> :class:`ReserveInventoryResult`.
- ``finish_attempt``: :class:`FinishAttemptInput` -> :class:`~orders.models.step_io.FencedResult`.

The steps both workflows share live elsewhere: ``send_agent_request`` in
:mod:`orders.models.agent_io`, ``record_step`` and ``fail_order`` in
:mod:`orders.models.compensation_io`, ``publish_status`` and ``alert_operator`` in
:mod:`orders.models.notice_io`. Compatibility rules: :mod:`orders.models.step_io`.
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
"""Version of an attempt whose input has no ``workflowVersion`` (started before SPEC X6)."""


class OrderWorkflowInput(StepContract):
    """Input of one attempt of the order workflow, built by the starter (SPEC S3, D4, X6).

    Settings travel in the input, so a replay sees the values the attempt started with.

    Attributes
    ----------
    order_id : str
        The order.
    attempt : int or None
        The attempt's number (also in the instance id); informational, the workflow does
        not read it. Absent in inputs not written by the starter.
    workflow_version : int
        The version the order started under; 1 when absent (inputs recorded before X6).
    deadline_s : float
        Seconds from the attempt's start to its CompleteBy.
    agent_max_attempts : int
        Calls an agent may make per request (SPEC A1, X2).
    trace_parent : str or None
        W3C ``traceparent`` of the attempt's start: its activities' spans are children of
        it (SPEC X8). Absent in inputs written before traces.
    """

    OMIT_IF_NONE = frozenset({"attempt", "trace_parent"})

    order_id: OrderKey
    attempt: int | None = Field(default=None, ge=1)
    workflow_version: int = FIRST_WORKFLOW_VERSION
    deadline_s: float = Field(gt=0)
    agent_max_attempts: int = Field(ge=1, le=100)
    trace_parent: str | None = Field(default=None, max_length=55)


class BeginAttemptInput(BeginInput):
    """Input of ``begin_attempt``: set CompleteBy while the attempt owns the record (S4, S5).

    Attributes
    ----------
    load_order : bool or None
        True (versions 3 and 4): also read the order, as ``load_order`` does. Absent
        before.
    """

    OMIT_IF_NONE = frozenset({"load_order"})

    load_order: bool | None = None


class BeginAttemptResult(BeginResult):
    """Result of ``begin_attempt``.

    Attributes
    ----------
    order : Order or None
        The order, when the input asked for it and the attempt owns the record.
    """

    OMIT_IF_NONE = frozenset({"order"})

    order: Order | None = None


class ReserveInventoryInput(StepContract):
    """Input of ``reserve_inventory``: the order's lines, as the order database holds them.

    Attributes
    ----------
    order_id : str
        The order (the reservation is keyed on it and the line's index, SPEC X7).
    lines : tuple of OrderLine
        The order's lines.
    """

    order_id: OrderKey
    lines: tuple[OrderLine, ...] = Field(min_length=1, max_length=1000)


class ReserveInventoryResult(StepContract):
    """Result of ``reserve_inventory``: what release inventory needs (SPEC S9).

    Attributes
    ----------
    reservation_id : str
        ``RES-<OrderID>``, stable across reruns and attempts (the log entry's details must
        not change between them, SPEC S9).
    lines : tuple of ReservedLine
        SKU and quantity of each line to reserve.
    out_of_stock : OutOfStock or None
        The first line that could not be reserved (a permanent failure: the lines before
        it are held until compensation releases them); None when every line is reserved.
    """

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset({"out_of_stock"})

    reservation_id: str = Field(min_length=1, max_length=128)
    lines: tuple[ReservedLine, ...] = Field(min_length=1, max_length=1000)
    out_of_stock: OutOfStock | None = None


class FinishAttemptInput(OwnedRecordInput):
    """Input of ``finish_attempt``: set Processed while the attempt owns the record (S4, S6).

    Attributes
    ----------
    state : {"Processed"}
        The only final state this step writes; failures go through ``fail_order``. Until
        compensation existed it also wrote ``Error``: such an input is refused, as it was
        since then.
    confirmed : ConfirmedStep or None
        Versions 3 and 4: the last step's log entry, written first, fenced or not.
    workflow_version : int or None
        The order's workflow version, for that entry; required with it.
    reply_to : str or None
        Versions 3 and 4: the reply queue told "OrderCompleted" once Processed is written
        (as ``publish_status`` does); nothing is sent when fenced.
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
    """Workflow output: a step failed permanently (SPEC S7).

    Attributes
    ----------
    outcome : {"error", "compensating"}
        Error when nothing was to undo (the client was told), else handed to compensation.
    step : str
        The remote operation that failed, or ``reserve_inventory`` (out of stock).
    reason : str or None
        The agent's reason, or :meth:`~orders.models.inventory.OutOfStock.reason`.
    """

    outcome: Literal["error", "compensating"]
    step: str
    reason: str | None


class UnknownWorkflowVersion(StepContract):
    """Workflow output: the input names a version this deployment does not run (SPEC X6)."""

    outcome: Literal["unknownWorkflowVersion"] = "unknownWorkflowVersion"


AttemptOutcome = Annotated[
    Processed | Superseded | LeftForSupervisor | Failed | UnknownWorkflowVersion,
    Field(discriminator="outcome"),
]
"""Output of an order workflow attempt, told apart by ``outcome``."""

ATTEMPT_OUTCOME: TypeAdapter[AttemptOutcome] = TypeAdapter(AttemptOutcome)
"""Validates an attempt's output, e.g. ``ATTEMPT_OUTCOME.validate_python(output)``."""

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
