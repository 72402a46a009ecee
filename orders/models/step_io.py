"""Base of the contracts between workflow steps, and the shapes several of them share.

Every activity input and result, orchestration input and output is a :class:`StepContract`
crossing as ``model_dump(mode="json")`` and read with ``model_validate`` (pure, so
orchestrators may, D4); never the SDK's ``__class__`` envelopes.

Compatibility rules (X6): replays and old-scheduled activities meet new code, so a key is
never renamed or removed while an order that may have recorded it is in flight; a new
field is optional with the default that keeps the old behaviour; unknown keys are refused
(a misspelt key fails the first test; the price is a two-step rollout: readers first,
then writers); ``OMIT_IF_NONE`` fields are left out when None, so new code writes exactly
the keys old code did.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo

from orders.models._types import Contract, InstanceId, OrderKey, QueueName, UtcDatetime


class StepContract(Contract):
    """A contract between workflow steps: camelCase JSON, unknown keys refused.

    Each ``OMIT_IF_NONE`` field is declared in the class naming it, defaulting to None.
    """

    model_config = ConfigDict(extra="forbid")

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Before pydantic reads the fields: pydantic's own exclude_if leaves these out, where
        # a wrap serializer called back into Python for every model dumped (five times slower).
        super().__init_subclass__(**kwargs)
        for name in cls.__dict__.get("OMIT_IF_NONE", ()):
            setattr(cls, name, _omitted_if_none(cls, name, cls.__dict__.get(name, _UNSET)))


_UNSET = object()


def _is_none(value: Any) -> bool:
    return value is None


def _omitted_if_none(cls: type, name: str, default: Any) -> Any:
    """Return the field ``name`` of ``cls`` (default None) with ``exclude_if`` None."""
    if isinstance(default, FieldInfo) and default.default is None:
        info = copy.copy(default)  # keeps its constraints (metadata) and other settings
        info.metadata = list(default.metadata)
        info.exclude_if = _is_none
        info._attributes_set = {**default._attributes_set, "exclude_if": _is_none}
        return info
    if default is None:
        return Field(None, exclude_if=_is_none)
    raise TypeError(f"{cls.__name__}.{name}: an OMIT_IF_NONE field is declared in the class "
                    "naming it, with the default None")


class OwnedRecordInput(StepContract):
    """Input of an activity that writes the state record, fenced on LockedBy (S4)."""

    order_key: OrderKey = Field(alias="orderId")
    instance_id: InstanceId


class BeginInput(OwnedRecordInput):
    """Input of a workflow's first activity: set CompleteBy while the attempt owns the record."""

    complete_by: UtcDatetime


class BeginResult(StepContract):
    """Result of a workflow's first activity; ``reply_to`` (S8) is None only when ``fenced``."""

    fenced: bool
    reply_to: QueueName | None = None

    @model_validator(mode="after")
    def _reply_to_unless_fenced(self) -> BeginResult:
        if not self.fenced and self.reply_to is None:
            raise ValueError("replyTo: required when the attempt owns the record")
        return self


class FencedResult(StepContract):
    """Result of a fenced write (S4); a rerun finding its own write is not fenced (X7)."""

    fenced: bool


class Superseded(StepContract):
    """Workflow output: a newer attempt owns the record; this one wrote nothing more."""

    outcome: Literal["superseded"] = "superseded"


class LeftForSupervisor(StepContract):
    """Workflow output: the attempt stopped without touching the record (S6, V1)."""

    outcome: Literal["timedOut", "transientFailure"]
    step: str
