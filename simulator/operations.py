"""The business operations of the simulated services of ``infra/services.json``.

They validate the request, read the order's earlier effects in the ledger transaction and
return the answer and effect; :mod:`simulator.app` adds HTTP, faults and idempotency.
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

from azurekit.services import catalogue
from simulator.ledger import Answer, SideEffect, effects_of, void_key


class ChargeBody(BaseModel):
    """Body of ``POST /payments``: capture ``amount`` of ``currency`` for an order."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_key: str = Field(alias="orderId", min_length=1, max_length=200)
    amount: Decimal = Field(gt=0)
    currency: str = Field(pattern=r"^[A-Z]{3}$")


class RefundBody(BaseModel):
    """Body of ``POST /payments/refunds``: undo the charge made with ``chargeKey``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_key: str = Field(alias="orderId", min_length=1, max_length=200)
    charge_key: str | None = Field(None, alias="chargeKey", min_length=1, max_length=255)


class CancelBody(BaseModel):
    """Body of ``POST /shipments/cancellations``: undo the shipment made with ``shipmentKey``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_key: str = Field(alias="orderId", min_length=1, max_length=200)
    shipment_key: str | None = Field(None, alias="shipmentKey", min_length=1, max_length=255)


class ShipmentLine(BaseModel):
    """One line of a shipment: a stock-keeping unit and a positive quantity."""

    model_config = ConfigDict(extra="allow")

    sku: str = Field(min_length=1)
    quantity: int = Field(ge=1)


class ShipBody(BaseModel):
    """Body of ``POST /shipments``: ship ``lines`` of an order to ``address``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    order_key: str = Field(alias="orderId", min_length=1, max_length=200)
    lines: list[ShipmentLine] = Field(min_length=1)
    address: dict[str, Any] | None = None


@dataclass(frozen=True)
class Call:
    """A validated request, ready to run inside the ledger transaction (``operation`` = kind)."""

    service: str
    operation: str
    order_key: str
    body: BaseModel


NOTHING_TO_UNDO = "nothing_to_undo"
"""Error code (409) of an undo whose forward request was never carried out; its key is voided."""

ALREADY_UNDONE = "already_undone"


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
        call.service, "charge", call.order_key, key, str(body.amount), body.currency,
        payment_id, None, now,
    )
    return Answer(
        201,
        {"paymentId": payment_id, "orderId": call.order_key, "amount": str(body.amount),
         "currency": body.currency, "status": "captured"},
        effect,
    )


def _undo_target(conn: sqlite3.Connection, call: Call, kind: str, undo_kind: str,
                 forward_key: str | None, key_field: str, noun: str,
                 now: datetime) -> SideEffect | Answer:
    """Find the forward effect an undo applies to, or the 409 answer (voiding an unused key)."""
    effects = effects_of(conn, call.service, call.order_key)
    undone = {e.ref_id for e in effects if e.kind == undo_kind}
    done = [e for e in effects if e.kind == kind
            and (forward_key is None or e.idempotency_key == forward_key)]
    still_open = [e for e in done if e.resource_id not in undone]
    if still_open:
        return still_open[-1]
    if not done and forward_key is not None:
        void_key(conn, call.service, forward_key, now)
    return _error(409, ALREADY_UNDONE if done else NOTHING_TO_UNDO,
                  f"{key_field}: no open {noun} of order {call.order_key!r} "
                  f"for key {forward_key!r}")


def refund(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Refund the charge made with ``chargeKey``; 409 ``nothing_to_undo`` or ``already_undone``."""
    assert isinstance(call.body, RefundBody)
    target = _undo_target(conn, call, "charge", "refund", call.body.charge_key, "chargeKey",
                          "charge", now)
    if isinstance(target, Answer):
        return target
    refund_id = _resource_id("re", call.service, key)
    effect = SideEffect(
        call.service, "refund", call.order_key, key, target.amount, target.currency,
        refund_id, target.resource_id, now,
    )
    return Answer(
        200,
        {"refundId": refund_id, "paymentId": target.resource_id, "orderId": call.order_key,
         "amount": target.amount, "currency": target.currency, "status": "refunded"},
        effect,
    )


def ship(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Create a shipment; every distinct key ships again (a duplicate is visible)."""
    shipment_id = _resource_id("shp", call.service, key)
    effect = SideEffect(
        call.service, "ship", call.order_key, key, None, None, shipment_id, None, now
    )
    return Answer(
        201, {"shipmentId": shipment_id, "orderId": call.order_key, "status": "created"}, effect
    )


def cancel(conn: sqlite3.Connection, call: Call, key: str, now: datetime) -> Answer:
    """Cancel the shipment made with ``shipmentKey``; 409 as :func:`refund`."""
    assert isinstance(call.body, CancelBody)
    target = _undo_target(conn, call, "ship", "cancel", call.body.shipment_key, "shipmentKey",
                          "shipment", now)
    if isinstance(target, Answer):
        return target
    effect = SideEffect(
        call.service, "cancel", call.order_key, key, None, None,
        _resource_id("cnl", call.service, key), target.resource_id, now,
    )
    return Answer(
        200,
        {"shipmentId": target.resource_id, "orderId": call.order_key, "status": "cancelled"},
        effect,
    )


Run = Callable[[sqlite3.Connection, Call, str, datetime], Answer]


@dataclass(frozen=True)
class Implementation:
    """How the simulator carries out one operation of ``infra/services.json``."""

    kind: str
    """Ledger kind of its side effect (also its name in fault knobs and request counts)."""
    body: type[BaseModel]
    run: Run


IMPLEMENTATIONS: dict[str, Implementation] = {
    "charge": Implementation("charge", ChargeBody, charge),
    "refund": Implementation("refund", RefundBody, refund),
    "ship": Implementation("ship", ShipBody, ship),
    "cancel_shipment": Implementation("cancel", CancelBody, cancel),
}

OPERATIONS: dict[str, Run] = {i.kind: i.run for i in IMPLEMENTATIONS.values()}


def implementation(operation: str) -> Implementation:
    """Return the implementation of a catalogue operation; a KeyError naming it if none."""
    try:
        return IMPLEMENTATIONS[operation]
    except KeyError:
        raise KeyError(f"operation: {operation!r} of services.json has no implementation "
                       "in simulator.operations.IMPLEMENTATIONS") from None


def forward_kinds() -> list[str]:
    """Ledger kinds of every forward operation of the catalogue (per-order faults' default)."""
    return [implementation(op).kind for spec in catalogue().services.values()
            for op in spec.forward_operations]
