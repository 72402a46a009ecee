"""The compensation log entry: what undoing one completed step needs (SPEC S9, X4, X10).

When an order cannot complete, what it did is undone in reverse order from a durable,
ordered log, one entry per step. A remote step is logged twice: *requested* (with its
idempotency key) before the agent sends the request, and *completed* (with the service's
ids) when the reply confirms it. A request that went out without an answer may have been
carried out, so compensation undoes every requested step, confirmed or not (SPEC S9).
An entry holds only what its undo needs: a reservation id and lines, an idempotency key, a
payment id with its amount and currency, a shipment id. Never card numbers: the details
models forbid unknown fields and refuse any text that looks like a primary account number.

Data classification
-------------------
Every details field carries a classification in its type
(``Annotated[..., Classified(...)]``, :mod:`orders.models.classification`). An entry's
classification is the most sensitive one among its fields that hold a value (never below
``Internal``: the entry names an order). A stored entry may be classified higher than its
fields, never lower.

Retention rule
--------------
An entry is kept for the retention of its classification, decided when it is written and
stored with it (``retentionDays`` and ``retainUntil = recordedAt + retentionDays``), so a
later policy change does not silently shorten or extend what was promised for it:

==============  =========  ===========================================================
Classification  Retention  Why
==============  =========  ===========================================================
Public          30 days    nothing to protect; kept only for day-to-day operations
Internal        90 days    investigating a failed or stuck compensation
Confidential    180 days   return windows and the usual 120-day chargeback window, no
                           longer (data minimisation for customer data)
Restricted      540 days   the longest card-scheme dispute window: a refund must stay
                           provable that long, and no longer
==============  =========  ===========================================================

The numbers are policy: change :data:`RETENTION`, not the code that applies it. The Cosmos
DB adapter also sets the item's ``ttl`` so the service deletes expired entries itself; the
SQLite adapter purges them on request.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from orders.models._types import Contract, Currency, InstanceId, OrderKey, Sku, UtcDatetime
from orders.models.classification import Classification, Classified

COMPENSATION_SCHEMA_VERSION = 2
"""Version of the compensation log entry contract written by this code (SPEC X6).

- 1: completed steps only; a remote step's request was not logged before it was sent.
- 2: remote steps are also logged as requested before they are sent (``*_requested``).
  A log holding version-1 entries belongs to an order that may have sent requests
  without logging them; :func:`orders.compensation.plan.pending_undos` probes those.
"""


RETENTION: dict[Classification, timedelta] = {
    Classification.PUBLIC: timedelta(days=30),
    Classification.INTERNAL: timedelta(days=90),
    Classification.CONFIDENTIAL: timedelta(days=180),
    Classification.RESTRICTED: timedelta(days=540),
}
"""How long an entry of each classification is kept (see the module docstring)."""


class Step(StrEnum):
    """A step of the order workflow that the log tracks, or the step that undoes one."""

    RESERVE_INVENTORY = "reserve_inventory"
    CHARGE = "charge"
    SHIP = "ship"
    RELEASE_INVENTORY = "release_inventory"
    REFUND = "refund"
    CANCEL_SHIPMENT = "cancel_shipment"
    CHARGE_REQUESTED = "charge_requested"
    """The charge request is about to go out (logged before the agent sends it)."""
    SHIP_REQUESTED = "ship_requested"
    """The shipment request is about to go out (logged before the agent sends it)."""


UNDO_STEP: dict[Step, Step] = {
    Step.RESERVE_INVENTORY: Step.RELEASE_INVENTORY,
    Step.CHARGE: Step.REFUND,
    Step.SHIP: Step.CANCEL_SHIPMENT,
}
"""The compensating step of each forward step (SPEC S9)."""

UNDOES: dict[Step, Step] = {undo: step for step, undo in UNDO_STEP.items()}
"""The forward step each compensating step undoes."""

REQUESTED: dict[Step, Step] = {
    Step.CHARGE: Step.CHARGE_REQUESTED,
    Step.SHIP: Step.SHIP_REQUESTED,
}
"""The *requested* entry of each remote forward step (logged before its request is sent)."""

REQUEST_OF: dict[Step, Step] = {requested: step for step, requested in REQUESTED.items()}
"""The remote forward step a *requested* entry announces."""


class UndoOutcome(StrEnum):
    """How a compensating step ended."""

    UNDONE = "Undone"
    NOTHING_TO_UNDO = "NothingToUndo"
    """The service knew nothing to undo (never done, or already undone): also success."""


_PAN_CANDIDATE = re.compile(r"\d{13,19}")


def _luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def looks_like_card_number(value: str) -> bool:
    """Tell whether ``value`` could be a primary account number (13-19 digits, Luhn valid).

    Spaces and dashes are ignored, as card numbers are often written with them.
    """
    digits = value.replace(" ", "").replace("-", "")
    return bool(_PAN_CANDIDATE.fullmatch(digits)) and _luhn_valid(digits)


Id = Annotated[str, Field(min_length=1, max_length=128)]
Key = Annotated[str, Field(min_length=1, max_length=255)]
"""An idempotency key (SPEC A2), at most 255 characters like the services accept."""
Amount = Annotated[Decimal, Field(ge=0, decimal_places=4, allow_inf_nan=False)]


class _Details(Contract):
    """Base of the per-step details: unknown fields are refused, card numbers too."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _no_card_numbers(self) -> _Details:
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if isinstance(value, str) and looks_like_card_number(value):
                raise ValueError(f"{info.alias or name}: looks like a card number; the "
                                 "compensation log must never hold card data (SPEC X10)")
        return self

    def classification(self) -> Classification:
        """Return the most sensitive classification among the fields that hold a value.

        None and an empty tuple hold none (a release that gave nothing back names no SKU).
        """
        level = Classification.INTERNAL
        for name, info in type(self).model_fields.items():
            if getattr(self, name) in (None, ()):
                continue
            for meta in info.metadata:
                if isinstance(meta, Classified) and meta.level.rank > level.rank:
                    level = meta.level
        return level


MaybeAmount = Annotated[Amount | None, Classified(Classification.RESTRICTED)]
"""An amount of money that may be unknown (a request with no answer, nothing refunded)."""
MaybeCurrency = Annotated[Currency | None, Classified(Classification.RESTRICTED)]
"""The currency of a :data:`MaybeAmount`."""


class ReservedLine(Contract):
    """One reserved order line."""

    model_config = ConfigDict(extra="forbid")

    sku: Sku
    quantity: int = Field(gt=0, le=1_000_000)


class ReservationDetails(_Details):
    """After reserve inventory: what release inventory needs."""

    step: Literal["reserve_inventory"] = "reserve_inventory"
    reservation_id: Annotated[Id, Classified(Classification.INTERNAL)]
    lines: Annotated[tuple[ReservedLine, ...], Classified(Classification.CONFIDENTIAL),
                     Field(min_length=1, max_length=1000)]


class PaymentDetails(_Details):
    """After a successful charge: what a refund needs (no card data)."""

    step: Literal["charge"] = "charge"
    payment_id: Annotated[Id, Classified(Classification.RESTRICTED)]
    amount: Annotated[Amount, Classified(Classification.RESTRICTED)]
    currency: Annotated[Currency, Classified(Classification.RESTRICTED)]


class ShipmentDetails(_Details):
    """After a successful shipment: what cancelling it needs."""

    step: Literal["ship"] = "ship"
    shipment_id: Annotated[Id, Classified(Classification.CONFIDENTIAL)]


class ChargeRequestDetails(_Details):
    """A charge request is going out: what refunding it needs even if no answer comes."""

    step: Literal["charge_requested"] = "charge_requested"
    idempotency_key: Annotated[Key, Classified(Classification.INTERNAL)]
    amount: MaybeAmount = None
    currency: MaybeCurrency = None


class ShipRequestDetails(_Details):
    """A shipment request is going out: what cancelling it needs even if no answer comes."""

    step: Literal["ship_requested"] = "ship_requested"
    idempotency_key: Annotated[Key, Classified(Classification.INTERNAL)]


class ReleaseDetails(_Details):
    """Inventory released: the reservation, and the units each line gave back.

    ``released`` is empty when nothing was held (an order reserved before the inventory
    was real, or out of stock on its first line); None in entries written before.
    """

    step: Literal["release_inventory"] = "release_inventory"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)] = UndoOutcome.UNDONE
    reservation_id: Annotated[Id, Classified(Classification.INTERNAL)]
    released: Annotated[tuple[ReservedLine, ...] | None, Classified(Classification.CONFIDENTIAL),
                        Field(max_length=1000)] = None


class RefundDetails(_Details):
    """Payment refunded, or nothing to refund."""

    step: Literal["refund"] = "refund"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)]
    refund_id: Annotated[Id | None, Classified(Classification.RESTRICTED)] = None
    amount: MaybeAmount = None
    currency: MaybeCurrency = None


class CancellationDetails(_Details):
    """Shipment cancelled, or nothing to cancel."""

    step: Literal["cancel_shipment"] = "cancel_shipment"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)]
    shipment_id: Annotated[Id | None, Classified(Classification.CONFIDENTIAL)] = None


StepDetails = Annotated[
    ReservationDetails | PaymentDetails | ShipmentDetails | ReleaseDetails | RefundDetails
    | CancellationDetails | ChargeRequestDetails | ShipRequestDetails,
    Field(discriminator="step"),
]
"""The details of one entry, told apart by their ``step``."""


class CompensationEntry(Contract):
    """One entry of an order's compensation log (SPEC S9); build it with :meth:`new`.

    Parameters
    ----------
    order_id : str
        OrderID, the partition key of the log.
    details : StepDetails
        What the step did / what undoing it needs; its ``step`` keys the entry, so writing
        the same step twice stores it once (idempotent on OrderID + step).
    seq : int or None
        Order of completion within the order, from 1; the store assigns it.
    instance_id : str
        The orchestration instance that completed the step.
    workflow_version : int
        Workflow version of the order (SPEC X6).
    classification : Classification
        The most sensitive classification of the details' fields, or higher.
    retention_days : int
        Days the entry is kept, from its classification (see the module docstring).
    recorded_at, retain_until : datetime
        Write time and ``recorded_at + retention_days``.

    Raises
    ------
    pydantic.ValidationError
        On a broken field rule, a classification below its fields', an inconsistent
        ``retain_until``, or anything that looks like card data.
    """

    order_id: OrderKey
    details: StepDetails
    seq: int | None = Field(default=None, ge=1)
    instance_id: InstanceId
    workflow_version: int = Field(ge=1)
    classification: Classification
    retention_days: int = Field(ge=1, le=36_500)
    recorded_at: UtcDatetime
    retain_until: UtcDatetime
    schema_version: int = Field(default=COMPENSATION_SCHEMA_VERSION, ge=1)

    @model_validator(mode="after")
    def _classified_and_retained(self) -> CompensationEntry:
        least = self.details.classification()
        if self.classification.rank < least.rank:
            raise ValueError(f"classification: must be at least {least.value}, the most "
                             f"sensitive of its fields (SPEC S9); got {self.classification.value}")
        if self.retain_until != self.recorded_at + timedelta(days=self.retention_days):
            raise ValueError("retainUntil: must equal recordedAt + retentionDays")
        return self

    @property
    def step(self) -> Step:
        """The step this entry records."""
        return Step(self.details.step)

    @property
    def undoes(self) -> Step | None:
        """The forward step a compensating entry undoes; None for a forward step."""
        return UNDOES.get(self.step)

    @classmethod
    def new(cls, order_id: str, details: Any, *, instance_id: str, workflow_version: int,
            now: datetime) -> CompensationEntry:
        """Build an entry, deriving classification and retention from the details.

        Parameters
        ----------
        order_id : str
            OrderID.
        details : StepDetails or dict
            A details model, or its JSON form (with ``step``).
        instance_id : str
            The writing orchestration instance.
        workflow_version : int
            The order's workflow version.
        now : datetime
            Write time, timezone-aware.

        Returns
        -------
        CompensationEntry
            ``seq`` None until stored.
        """
        shell = cls.model_validate({
            "orderId": order_id, "details": details, "instanceId": instance_id,
            "workflowVersion": workflow_version, "classification": Classification.RESTRICTED,
            "retentionDays": 1, "recordedAt": now, "retainUntil": now + timedelta(days=1)})
        level = shell.details.classification()
        days = RETENTION[level].days
        return shell.model_copy(update={
            "classification": level, "retention_days": days,
            "retain_until": shell.recorded_at + timedelta(days=days)})

    def same_step(self, other: CompensationEntry) -> bool:
        """Tell whether ``other`` records the same step of the same order with equal details."""
        return (self.order_id, self.details) == (other.order_id, other.details)
