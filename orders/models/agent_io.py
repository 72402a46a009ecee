"""Contracts of the agent messages as the workflows build and read them (A1-A4, S9).

Adds ``send_agent_request``'s input (returns the MessageId as a JSON string) and the
payload of each operation (:data:`PAYLOADS`), which the agent forwards unread, and what
the compensation log keeps of each remote step with an undo (one ``LogDetails`` per step:
the completed step, its *requested* entry, its undo; S9). An undo's payload is the
completed step's details plus the forward key (:data:`ForwardKey`).
``AgentRequest``/``AgentReply`` ignore unknown keys, unlike step contracts: queue
messages outlive their deployment and are read by both versions during a rollout, and a
reply the handler accepted must not fail the orchestration. Payloads refuse unknown keys.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from orders.models._types import Currency, OrderKey
from orders.models.classification import Classification, Classified
from orders.models.compensation import (
    Amount,
    Id,
    Key,
    LogDetails,
    MaybeAmount,
    MaybeCurrency,
    ReservedLine,
    UndoOutcome,
)
from orders.models.compensation_io import ConfirmedStep
from orders.models.messages import AgentRequest, Operation
from orders.models.money import fixed_point
from orders.models.order import Order
from orders.models.step_io import StepContract


class SendAgentRequestInput(AgentRequest, StepContract):
    """Input of ``send_agent_request``: the request plus the workflow version.

    ``workflow_version`` is for the *requested* log entry (S9, X6); absent for undos and in
    older inputs, when the activity reads it from the state record. ``confirmed``
    (versions 3 to 6): the previous step's entry, logged first.
    """

    model_config = ConfigDict(extra="forbid")

    OMIT_IF_NONE = frozenset({"workflow_version", "confirmed"})

    workflow_version: int | None = Field(default=None, ge=1)
    confirmed: ConfirmedStep | None = None

    @classmethod
    def of(cls, request: AgentRequest, workflow_version: int | None,
           confirmed: ConfirmedStep | None = None) -> SendAgentRequestInput:
        """Wrap ``request``; ``workflow_version`` None for an undo."""
        return cls(**dict(request), workflow_version=workflow_version, confirmed=confirmed)

    def request(self) -> AgentRequest:
        """Return the request as it goes on the queue (without ``workflowVersion``)."""
        return AgentRequest(**{name: getattr(self, name) for name in AgentRequest.model_fields})

    def queue_body(self) -> dict[str, Any]:
        """Return ``request()``'s JSON form, dumped from this input without building it."""
        return self.model_dump(mode="json", exclude=_INPUT_ONLY)


_INPUT_ONLY = set(SendAgentRequestInput.model_fields) - set(AgentRequest.model_fields)
"""Fields of ``SendAgentRequestInput`` that are not the request's: left out of the body."""


class ForwardKeyField:
    """Marks the field of an undo's payload that names the forward request by its key."""


ForwardKey = Annotated[Key | None, ForwardKeyField()]
"""The forward request's idempotency key in an undo's payload (None in older requests)."""


class AgentPayload(StepContract):
    """Base of the request payloads: the body of one call to a service.

    A forward operation's payload is built from the order (:meth:`of_order`); an undo's
    from the forward step's log entry (:meth:`orders.remote_steps.RemoteStep.undo_request`).
    """

    @classmethod
    def of_order(cls, order: Order) -> AgentPayload:
        """Return the payload of a forward request for ``order``.

        Raises
        ------
        NotImplementedError
            For an undo's payload, which is built from the log, never from the order.
        """
        raise NotImplementedError(f"{cls.__name__}: an undo's payload is built from the log")

    def to_payload(self) -> dict[str, Any]:
        """Return the JSON form for ``AgentRequest.payload`` (absent ids left out)."""
        return self.model_dump(mode="json")


class ChargePayload(AgentPayload):
    """``charge``: take the order's total (``POST /payments``)."""

    order_key: OrderKey = Field(alias="orderId")
    amount: Decimal = Field(gt=0, allow_inf_nan=False)
    currency: Currency

    @classmethod
    def of_order(cls, order: Order) -> ChargePayload:
        """Charge the order's total, in whole minor units, in its currency."""
        return cls(order_key=order.order_key, amount=fixed_point(order.total_price),
                   currency=order.currency)


class ChargeRequestDetails(LogDetails):
    """A charge request is going out: what refunding it needs even if no answer comes."""

    step: Literal["charge_requested"] = "charge_requested"
    idempotency_key: Annotated[Key, Classified(Classification.INTERNAL)]
    amount: MaybeAmount = None
    currency: MaybeCurrency = None


class PaymentDetails(LogDetails):
    """After a successful charge: what a refund needs (no card data)."""

    step: Literal["charge"] = "charge"
    payment_id: Annotated[Id, Classified(Classification.RESTRICTED)]
    amount: Annotated[Amount, Classified(Classification.RESTRICTED)]
    currency: Annotated[Currency, Classified(Classification.RESTRICTED)]


class ShipPayload(AgentPayload):
    """``ship``: create the shipment of the order's lines (``POST /shipments``)."""

    order_key: OrderKey = Field(alias="orderId")
    lines: tuple[ReservedLine, ...] = Field(min_length=1, max_length=1000)

    @classmethod
    def of_order(cls, order: Order) -> ShipPayload:
        """Ship every line of the order, SKU and quantity."""
        return cls(order_key=order.order_key, lines=tuple(
            ReservedLine(sku=li.sku, quantity=li.quantity) for li in order.lines))


class ShipRequestDetails(LogDetails):
    """A shipment request is going out: what cancelling it needs even if no answer comes."""

    step: Literal["ship_requested"] = "ship_requested"
    idempotency_key: Annotated[Key, Classified(Classification.INTERNAL)]


class ShipmentDetails(LogDetails):
    """After a successful shipment: what cancelling it needs."""

    step: Literal["ship"] = "ship"
    shipment_id: Annotated[Id, Classified(Classification.CONFIDENTIAL)]


class RefundPayload(AgentPayload):
    """``refund``: undo exactly the charge made with ``charge_key`` (``POST /payments/refunds``).

    Without ``charge_key`` (older undo requests) the service refunds the most recent open charge.
    """

    OMIT_IF_NONE = frozenset({"charge_key", "payment_id", "amount", "currency"})

    order_key: OrderKey = Field(alias="orderId")
    charge_key: ForwardKey = None
    payment_id: Id | None = None
    amount: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)
    currency: Currency | None = None


class RefundDetails(LogDetails):
    """Payment refunded, or nothing to refund."""

    step: Literal["refund"] = "refund"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)]
    refund_id: Annotated[Id | None, Classified(Classification.RESTRICTED)] = None
    amount: MaybeAmount = None
    currency: MaybeCurrency = None


class CancelShipmentPayload(AgentPayload):
    """``cancel_shipment``: undo the shipment made with ``shipment_key`` (absent if older)."""

    OMIT_IF_NONE = frozenset({"shipment_key", "shipment_id"})

    order_key: OrderKey = Field(alias="orderId")
    shipment_key: ForwardKey = None
    shipment_id: Id | None = None


class CancellationDetails(LogDetails):
    """Shipment cancelled, or nothing to cancel."""

    step: Literal["cancel_shipment"] = "cancel_shipment"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)]
    shipment_id: Annotated[Id | None, Classified(Classification.CONFIDENTIAL)] = None


PAYLOADS: dict[Operation, type[AgentPayload]] = {
    "charge": ChargePayload,
    "ship": ShipPayload,
    "refund": RefundPayload,
    "cancel_shipment": CancelShipmentPayload,
}

__all__ = [
    "PAYLOADS",
    "AgentPayload",
    "CancelShipmentPayload",
    "CancellationDetails",
    "ChargePayload",
    "ChargeRequestDetails",
    "ForwardKey",
    "ForwardKeyField",
    "PaymentDetails",
    "RefundDetails",
    "RefundPayload",
    "SendAgentRequestInput",
    "ShipPayload",
    "ShipRequestDetails",
    "ShipmentDetails",
]
