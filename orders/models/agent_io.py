"""Contracts of the agent messages as the workflows build and read them (SPEC A1-A4, S9).

The messages themselves are :class:`~orders.models.messages.AgentRequest` (to the agents'
request queues) and :class:`~orders.models.messages.AgentReply` (raised to the waiting
instance as the external event ``<operation>-reply``); the workflows read a reply with
``AgentReply.model_validate``, exactly as the reply handler did before raising it.
This module adds:

- ``send_agent_request``: :class:`SendAgentRequestInput` (the request plus the order's
  workflow version) -> the request's MessageId as a bare JSON string.
- The request payload of each operation, the body the agent sends to its service:
  :class:`ChargePayload`, :class:`ShipPayload`, :class:`RefundPayload`,
  :class:`CancelShipmentPayload` (:data:`PAYLOADS`). The agent forwards
  ``AgentRequest.payload`` without reading it, so the workflows build it with these
  models and :meth:`AgentPayload.to_payload`.

Why the queue messages keep accepting unknown keys
--------------------------------------------------
``AgentRequest`` and ``AgentReply`` ignore keys they do not know, unlike the contracts
between steps. They cross the queues, where a message outlives the deployment that wrote
it and is read by hosts of both versions during a rollout; their reader is the queue
trigger, which dead-letters a bad body with its reason (:mod:`orders.models.wire`). A
reply the reply handler accepted must never make the waiting orchestration fail, so the
workflows read it with the same model. A misspelt *required* key is still refused (it is
missing); the payloads and :class:`SendAgentRequestInput` refuse any unknown key.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import ConfigDict, Field

from orders.models._types import Currency, OrderKey
from orders.models.compensation import Id, Key, ReservedLine
from orders.models.compensation_io import ConfirmedStep
from orders.models.messages import AgentRequest, Operation
from orders.models.step_io import StepContract


class SendAgentRequestInput(AgentRequest, StepContract):
    """Input of ``send_agent_request``: the request, plus the order's workflow version.

    Attributes
    ----------
    workflow_version : int or None
        The order's workflow version for the *requested* log entry the activity writes
        before a forward request goes out (SPEC S9, X6). Absent from the compensation
        workflow's undo requests and from inputs recorded before requests were logged;
        the activity then reads it from the state record.
    confirmed : ConfirmedStep or None
        Versions 3 and 4: the previous step's log entry, written before the *requested*
        one. Absent before.
    """

    model_config = ConfigDict(extra="forbid")

    OMIT_IF_NONE = frozenset({"workflow_version", "confirmed"})

    workflow_version: int | None = Field(default=None, ge=1)
    confirmed: ConfirmedStep | None = None

    @classmethod
    def of(cls, request: AgentRequest, workflow_version: int | None,
           confirmed: ConfirmedStep | None = None) -> SendAgentRequestInput:
        """Wrap ``request`` for the send activity (``workflow_version`` None for an undo)."""
        return cls(**dict(request), workflow_version=workflow_version, confirmed=confirmed)

    def request(self) -> AgentRequest:
        """Return the request as it goes on the queue (without ``workflowVersion``)."""
        return AgentRequest(**{name: getattr(self, name) for name in AgentRequest.model_fields})


class AgentPayload(StepContract):
    """Base of the request payloads: the body of one call to a service."""

    def to_payload(self) -> dict[str, Any]:
        """Return the JSON form for ``AgentRequest.payload`` (absent ids left out)."""
        return self.model_dump(mode="json")


class ChargePayload(AgentPayload):
    """``charge``: take the order's total (``POST /payments``).

    Attributes
    ----------
    order_id : str
        The order.
    amount : Decimal
        The order's total; a JSON string, so no amount passes through a float.
    currency : str
        ISO 4217 code.
    """

    order_id: OrderKey
    amount: Decimal = Field(gt=0, allow_inf_nan=False)
    currency: Currency


class ShipPayload(AgentPayload):
    """``ship``: create the shipment of the order's lines (``POST /shipments``).

    Attributes
    ----------
    order_id : str
        The order.
    lines : tuple of ReservedLine
        SKU and quantity of each line.
    """

    order_id: OrderKey
    lines: tuple[ReservedLine, ...] = Field(min_length=1, max_length=1000)


class RefundPayload(AgentPayload):
    """``refund``: undo the charge made with ``chargeKey`` (``POST /payments/refunds``).

    Attributes
    ----------
    order_id : str
        The order.
    charge_key : str or None
        The charge request's idempotency key, so the service undoes exactly that charge, or
        nothing. Absent in undo requests queued before requests were logged (the service
        then refunds the order's most recent open charge).
    payment_id, amount, currency : optional
        What the charge's answer named, when one came; absent otherwise.
    """

    OMIT_IF_NONE = frozenset({"charge_key", "payment_id", "amount", "currency"})

    order_id: OrderKey
    charge_key: Key | None = None
    payment_id: Id | None = None
    amount: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)
    currency: Currency | None = None


class CancelShipmentPayload(AgentPayload):
    """``cancel_shipment``: undo the shipment made with ``shipmentKey``.

    Attributes
    ----------
    order_id : str
        The order.
    shipment_key : str or None
        The shipment request's idempotency key; absent in undo requests queued before
        requests were logged.
    shipment_id : str or None
        What the shipment's answer named, when one came.
    """

    OMIT_IF_NONE = frozenset({"shipment_key", "shipment_id"})

    order_id: OrderKey
    shipment_key: Key | None = None
    shipment_id: Id | None = None


PAYLOADS: dict[Operation, type[AgentPayload]] = {
    "charge": ChargePayload,
    "ship": ShipPayload,
    "refund": RefundPayload,
    "cancel_shipment": CancelShipmentPayload,
}
"""The payload contract of each operation."""

__all__ = [
    "PAYLOADS",
    "AgentPayload",
    "CancelShipmentPayload",
    "ChargePayload",
    "RefundPayload",
    "SendAgentRequestInput",
    "ShipPayload",
]
