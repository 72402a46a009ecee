"""The four business operations of the simulated payment and shipping APIs.

Each operation validates its request, looks at the order's earlier side effects in the
ledger transaction, and returns the answer plus the side effect to record. They know
nothing of HTTP headers, faults or idempotency keys beyond stamping the key on the
ledger row; :mod:`simulator.app` wraps them.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from simulator.ledger import Answer, SideEffect, effects_of


class ChargeBody(BaseModel):
    """Body of ``POST /payments``: capture ``amount`` of ``currency`` for an order."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_id: str = Field(alias="orderId", min_length=1, max_length=200)
    amount: Decimal = Field(gt=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")


class ShipmentLine(BaseModel):
    """One line of a shipment: a stock-keeping unit and a positive quantity."""

    model_config = ConfigDict(extra="allow")

    sku: str = Field(min_length=1)
    quantity: int = Field(ge=1)


class ShipBody(BaseModel):
    """Body of ``POST /shipments``: ship ``lines`` of an order to ``address``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_id: str = Field(alias="orderId", min_length=1, max_length=200)
    lines: list[ShipmentLine] = Field(min_length=1)
    address: dict[str, Any] | None = None


@dataclass(frozen=True)
class Call:
    """A validated request, ready to run inside the ledger transaction.

    Attributes
    ----------
    service : str
        ``payment`` or ``shipping``.
    operation : str
        ``charge``, ``refund``, ``ship`` or ``cancel`` (also the ledger ``kind``).
    order_id : str
        The order.
    body : BaseModel or None
        The validated body (None for refund and cancel).
    """

    service: str
    operation: str
    order_id: str
    body: BaseModel | None = None


def _resource_id(prefix: str, service: str, key: str) -> str:
    # Derived from the key, so a replayed run produces the same ids.
    return f"{prefix}_{hashlib.sha256(f'{service}|{key}'.encode()).hexdigest()[:16]}"


def _error(status: int, code: str, message: str) -> Answer:
    return Answer(status, {"error": code, "message": message})


def charge(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Capture a payment; every distinct key captures again (a duplicate is visible)."""
    assert isinstance(call.body, ChargeBody)
    body = call.body
    payment_id = _resource_id("pay", call.service, key)
    effect = SideEffect(
        call.service, "charge", call.order_id, key, str(body.amount), body.currency,
        payment_id, None, now,
    )
    return Answer(
        201,
        {"paymentId": payment_id, "orderId": call.order_id, "amount": str(body.amount),
         "currency": body.currency, "status": "captured"},
        effect,
    )


def refund(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Refund the order's most recent captured payment not yet refunded.

    Answers 404 ``payment_not_found`` if the order was never charged and 409
    ``already_refunded`` if every charge is refunded; both are permanent.
    """
    earlier = effects_of(conn, call.service, call.order_id)
    refunded = {e.ref_id for e in earlier if e.kind == "refund"}
    charges = [e for e in earlier if e.kind == "charge"]
    if not charges:
        return _error(404, "payment_not_found", f"orderId: no payment for {call.order_id!r}")
    open_charges = [e for e in charges if e.resource_id not in refunded]
    if not open_charges:
        return _error(409, "already_refunded", f"orderId: {call.order_id!r} already refunded")
    target = open_charges[-1]
    refund_id = _resource_id("re", call.service, key)
    effect = SideEffect(
        call.service, "refund", call.order_id, key, target.amount, target.currency,
        refund_id, target.resource_id, now,
    )
    return Answer(
        200,
        {"refundId": refund_id, "paymentId": target.resource_id, "orderId": call.order_id,
         "amount": target.amount, "currency": target.currency, "status": "refunded"},
        effect,
    )


def ship(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Create a shipment; every distinct key ships again (a duplicate is visible)."""
    shipment_id = _resource_id("shp", call.service, key)
    effect = SideEffect(
        call.service, "ship", call.order_id, key, None, None, shipment_id, None, now
    )
    return Answer(
        201, {"shipmentId": shipment_id, "orderId": call.order_id, "status": "created"}, effect
    )


def cancel(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Cancel the order's most recent shipment not yet cancelled.

    Answers 404 ``shipment_not_found`` if the order was never shipped and 409
    ``already_cancelled`` if every shipment is cancelled; both are permanent.
    """
    earlier = effects_of(conn, call.service, call.order_id)
    cancelled = {e.ref_id for e in earlier if e.kind == "cancel"}
    shipments = [e for e in earlier if e.kind == "ship"]
    if not shipments:
        return _error(404, "shipment_not_found", f"orderId: no shipment for {call.order_id!r}")
    open_shipments = [e for e in shipments if e.resource_id not in cancelled]
    if not open_shipments:
        return _error(
            409, "already_cancelled", f"orderId: {call.order_id!r} already cancelled"
        )
    target = open_shipments[-1]
    effect = SideEffect(
        call.service, "cancel", call.order_id, key, None, None,
        _resource_id("cnl", call.service, key), target.resource_id, now,
    )
    return Answer(
        200,
        {"shipmentId": target.resource_id, "orderId": call.order_id, "status": "cancelled"},
        effect,
    )


OPERATIONS: dict[str, Callable[[sqlite3.Connection, Call, str, datetime], Answer]] = {
    "charge": charge,
    "refund": refund,
    "ship": ship,
    "cancel": cancel,
}
"""Operation name (= ledger kind) to its implementation."""
