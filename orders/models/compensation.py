"""The compensation log entry: what undoing one completed step needs (S9, X4, X10).

Remote steps are logged *requested* before the request goes out and *completed* on the
reply; every requested step is undone, confirmed or not (S9). The remote steps follow from
``infra/services.json`` (:class:`Step`); their details are declared with the service's
contracts. Entries refuse unknown fields and anything like a card number. Classification
and retention: docs/operations.md, "Compensation log: classification and retention".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationInfo,
    model_validator,
)

from azurekit.services import UnknownServiceError, catalogue
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


LOCAL_UNDO = {"reserve_inventory": "release_inventory"}
"""The step done and undone here (inventory); every other logged step is remote."""

REQUESTED_SUFFIX = "_requested"
"""A remote step's *requested* log step is ``<operation>_requested``."""


def remote_undos() -> dict[str, str]:
    """Return forward operation -> its undo for every operation with one (services.json)."""
    return {op: undo for spec in catalogue().services.values()
            for op in spec.forward_operations
            if (undo := spec.operations[op].undo) is not None}


def _step_members() -> dict[str, str]:
    remote = remote_undos()
    values = [*LOCAL_UNDO, *remote, *LOCAL_UNDO.values(), *remote.values(),
              *(op + REQUESTED_SUFFIX for op in remote)]
    twice = sorted({value for value in values if values.count(value) > 1})
    if twice:
        raise UnknownServiceError(f"compensation log steps {twice} named twice: an operation "
                                  "of services.json is named as a local or *_requested step")
    return {value.upper(): value for value in values}


if TYPE_CHECKING:  # type checkers see the local steps; the remote ones follow at import
    class Step(StrEnum):
        """A logged step or its undo: the local ones, then one per remote step with an undo."""

        RESERVE_INVENTORY = "reserve_inventory"
        RELEASE_INVENTORY = "release_inventory"
else:
    Step = StrEnum("Step", _step_members(), module=__name__)
    Step.__doc__ = ("A logged step or its undo: reserve and release inventory, and for each "
                    "operation of services.json with an undo, the operation, its undo and "
                    "``<operation>_requested``.")


UNDO_STEP: dict[Step, Step] = {
    Step(step): Step(undo) for step, undo in {**LOCAL_UNDO, **remote_undos()}.items()}

UNDOES: dict[Step, Step] = {undo: step for step, undo in UNDO_STEP.items()}

REQUESTED: dict[Step, Step] = {
    Step(op): Step(op + REQUESTED_SUFFIX) for op in remote_undos()}

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


_DETAILS: dict[str, type[LogDetails]] = {}
"""Details class of each step, by step value (filled as the classes are declared)."""


class LogDetails(Contract):
    """Base of the per-step details: unknown fields are refused, card numbers too.

    A subclass with ``step: Literal["<step>"]`` is the details of that step; a remote step's
    are declared with its service's contracts (:mod:`orders.models.agent_io`).
    """

    model_config = ConfigDict(extra="forbid")

    step: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        step = cls.model_fields.get("step")
        if step is None or not isinstance(step.default, str):
            return
        known = _DETAILS.setdefault(step.default, cls)
        if known is not cls:
            raise TypeError(f"{cls.__name__}: step {step.default!r} already has its details "
                            f"class, {known.__name__}")

    @model_validator(mode="after")
    def _no_card_numbers(self) -> LogDetails:
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if isinstance(value, str) and looks_like_card_number(value):
                raise ValueError(f"{info.alias or name}: looks like a card number; the "
                                 "compensation log must never hold card data (X10)")
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


class ReservationDetails(LogDetails):
    """After reserve inventory: what release inventory needs."""

    step: Literal["reserve_inventory"] = "reserve_inventory"
    reservation_id: Annotated[Id, Classified(Classification.INTERNAL)]
    lines: Annotated[tuple[ReservedLine, ...], Classified(Classification.CONFIDENTIAL),
                     Field(min_length=1, max_length=1000)]


class ReleaseDetails(LogDetails):
    """Inventory released; ``released`` empty if nothing was held, None in older entries."""

    step: Literal["release_inventory"] = "release_inventory"
    outcome: Annotated[UndoOutcome, Classified(Classification.INTERNAL)] = UndoOutcome.UNDONE
    reservation_id: Annotated[Id, Classified(Classification.INTERNAL)]
    released: Annotated[tuple[ReservedLine, ...] | None, Classified(Classification.CONFIDENTIAL),
                        Field(max_length=1000)] = None


def details_model(step: str) -> type[LogDetails]:
    """Return the details class of ``step``; :class:`UnknownServiceError` naming it if none."""
    try:
        return _DETAILS[step]
    except KeyError:
        raise UnknownServiceError(
            f"details.step: {step!r} is not a step of the compensation log (known: "
            f"{', '.join(_DETAILS)})") from None


def log_details_models() -> tuple[type[LogDetails], ...]:
    """Return every step's details class."""
    return tuple(_DETAILS.values())


def check_log_details(steps: Iterable[str] | None = None) -> None:
    """Check each step (default: of :class:`Step`) has a details class and each class a step.

    Raises
    ------
    UnknownServiceError
        Naming the step without details, or the class whose step services.json lacks.
    """
    known = [str(step) for step in (Step if steps is None else steps)]
    for step in known:
        if step not in _DETAILS:
            raise UnknownServiceError(
                f"compensation log step {step!r} (infra/services.json) has no details "
                "class: declare a LogDetails subclass with step Literal[...] in "
                "orders/models/agent_io.py")
    for value, model in _DETAILS.items():
        if value not in known:
            raise UnknownServiceError(
                f"{model.__name__}: step {value!r} is no operation of infra/services.json "
                "with an undo, nor its undo or *_requested step")


def _details_of_step(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, LogDetails) or not isinstance(value, dict):
        return value
    return details_model(str(value.get("step"))).model_validate(value, context=info.context)


StepDetails = Annotated[SerializeAsAny[LogDetails], BeforeValidator(_details_of_step)]
"""The details of one entry, of the class its ``step`` names."""


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
                             f"sensitive of its fields (S9); got {self.classification.value}")
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
