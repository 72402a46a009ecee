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


class RefundBody(BaseModel):
    """Body of ``POST /payments/refunds``: undo the charge made with ``chargeKey``.

    ``chargeKey`` is the charge request's ``Idempotency-Key``: the refund undoes exactly
    what that request did, whether or not its answer ever reached the caller. Without it
    (requests of older callers) the order's most recent open charge is refunded.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_id: str = Field(alias="orderId", min_length=1, max_length=200)
    charge_key: str | None = Field(None, alias="chargeKey", min_length=1, max_length=255)


class CancelBody(BaseModel):
    """Body of ``POST /shipments/cancellations``: undo the shipment made with ``shipmentKey``.

    Like :class:`RefundBody`, keyed on the forward request's ``Idempotency-Key``.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_id: str = Field(alias="orderId", min_length=1, max_length=200)
    shipment_key: str | None = Field(None, alias="shipmentKey", min_length=1, max_length=255)


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
    body : BaseModel
        The validated body.
    """

    service: str
    operation: str
    order_id: str
    body: BaseModel


NOTHING_TO_UNDO = "nothing_to_undo"
"""Error code (with 409) of an undo whose forward request was never carried out."""

ALREADY_UNDONE = "already_undone"
"""Error code (with 409) of an undo whose forward effect is undone already."""


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


def _undo_target(effects: list[SideEffect], kind: str, undo_kind: str,
                 forward_key: str | None) -> SideEffect | str:
    """Find the forward effect an undo applies to, or the error code saying why none."""
    undone = {e.ref_id for e in effects if e.kind == undo_kind}
    done = [e for e in effects if e.kind == kind
            and (forward_key is None or e.idempotency_key == forward_key)]
    if not done:
        return NOTHING_TO_UNDO
    still_open = [e for e in done if e.resource_id not in undone]
    return still_open[-1] if still_open else ALREADY_UNDONE


def refund(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Refund the charge made with ``chargeKey`` (or the order's most recent open one).

    Answers 409 ``nothing_to_undo`` if no such charge was ever made and 409
    ``already_undone`` if it is refunded; both are permanent and documented, so the
    caller can tell "nothing to undo" from any other refusal.
    """
    assert isinstance(call.body, RefundBody)
    earlier = effects_of(conn, call.service, call.order_id)
    target = _undo_target(earlier, "charge", "refund", call.body.charge_key)
    if isinstance(target, str):
        return _error(409, target, f"chargeKey: no open charge of order {call.order_id!r}"
                      f" for key {call.body.charge_key!r}")
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
    """Cancel the shipment made with ``shipmentKey`` (or the order's most recent open one).

    Answers 409 ``nothing_to_undo`` if no such shipment was ever made and 409
    ``already_undone`` if it is cancelled (see :func:`refund`).
    """
    assert isinstance(call.body, CancelBody)
    earlier = effects_of(conn, call.service, call.order_id)
    target = _undo_target(earlier, "ship", "cancel", call.body.shipment_key)
    if isinstance(target, str):
        return _error(409, target, f"shipmentKey: no open shipment of order "
                      f"{call.order_id!r} for key {call.body.shipment_key!r}")
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
