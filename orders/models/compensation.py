"""The compensation log entry: what undoing one completed step needs (S9, X4, X10).

Remote steps are logged *requested* before the request goes out and *completed* on the
reply; every requested step is undone, confirmed or not (S9). Entries refuse unknown
fields and anything like a card number. Classification and retention: docs/operations.md,
"Compensation log: classification and retention".
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
"""Version of the entry contract (X6); 2 added ``*_requested`` (version-1 logs are probed)."""


RETENTION: dict[Classification, timedelta] = {
    Classification.PUBLIC: timedelta(days=30),
    Classification.INTERNAL: timedelta(days=90),
    Classification.CONFIDENTIAL: timedelta(days=180),
    Classification.RESTRICTED: timedelta(days=540),
}


class Step(StrEnum):
    """A step of the order workflow that the log tracks, or the step that undoes one."""

    RESERVE_INVENTORY = "reserve_inventory"
    CHARGE = "charge"
    SHIP = "ship"
    RELEASE_INVENTORY = "release_inventory"
    REFUND = "refund"
    CANCEL_SHIPMENT = "cancel_shipment"
    CHARGE_REQUESTED = "charge_requested"
    SHIP_REQUESTED = "ship_requested"


UNDO_STEP: dict[Step, Step] = {
    Step.RESERVE_INVENTORY: Step.RELEASE_INVENTORY,
    Step.CHARGE: Step.REFUND,
    Step.SHIP: Step.CANCEL_SHIPMENT,
}

UNDOES: dict[Step, Step] = {undo: step for step, undo in UNDO_STEP.items()}

REQUESTED: dict[Step, Step] = {
    Step.CHARGE: Step.CHARGE_REQUESTED,
    Step.SHIP: Step.SHIP_REQUESTED,
}

REQUEST_OF: dict[Step, Step] = {requested: step for step, requested in REQUESTED.items()}


class UndoOutcome(StrEnum):
    """How a compensating step ended."""

    UNDONE = "Undone"
    NOTHING_TO_UNDO = "NothingToUndo"
    """Never done or already undone: also success."""


_PAN_CANDIDATE = re.compile(r"\d{13,19}")


def _luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def looks_like_card_number(value: str) -> bool:
    """Tell whether ``value`` may be a card number (13-19 digits, Luhn; spaces, dashes skipped)."""
    digits = value.replace(" ", "").replace("-", "")
    return bool(_PAN_CANDIDATE.fullmatch(digits)) and _luhn_valid(digits)


Id = Annotated[str, Field(min_length=1, max_length=128)]
Key = Annotated[str, Field(min_length=1, max_length=255)]
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
        """Return the most sensitive classification among the fields holding a value."""
        level = Classification.INTERNAL
        for name, info in type(self).model_fields.items():
            if getattr(self, name) in (None, ()):
                continue
            for meta in info.metadata:
                if isinstance(meta, Classified) and meta.level.rank > level.rank:
                    level = meta.level
        return level


MaybeAmount = Annotated[Amount | None, Classified(Classification.RESTRICTED)]
MaybeCurrency = Annotated[Currency | None, Classified(Classification.RESTRICTED)]


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
    """Inventory released; ``released`` empty if nothing was held, None in older entries."""

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
    """One entry of an order's compensation log (S9); build it with :meth:`new`.

    ``details.step`` keys the entry (idempotent on order key + step); the store assigns ``seq``.

    Raises
    ------
    pydantic.ValidationError
        On a broken field rule, a classification below its fields', an inconsistent
        ``retain_until``, or anything that looks like card data.
    """

    order_key: OrderKey = Field(alias="orderId")
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
    def new(cls, order_key: str, details: Any, *, instance_id: str, workflow_version: int,
            now: datetime) -> CompensationEntry:
        """Build an entry (``seq`` None), deriving classification and retention from the details."""
        shell = cls.model_validate({
            "orderId": order_key, "details": details, "instanceId": instance_id,
            "workflowVersion": workflow_version, "classification": Classification.RESTRICTED,
            "retentionDays": 1, "recordedAt": now, "retainUntil": now + timedelta(days=1)})
        level = shell.details.classification()
        days = RETENTION[level].days
        return shell.model_copy(update={
            "classification": level, "retention_days": days,
            "retain_until": shell.recorded_at + timedelta(days=days)})

    def same_step(self, other: CompensationEntry) -> bool:
        """Tell whether ``other`` records the same step of the same order with equal details."""
        return (self.order_key, self.details) == (other.order_key, other.details)
