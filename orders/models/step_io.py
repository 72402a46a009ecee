"""Base of the contracts between workflow steps, and the shapes several of them share.

The Durable Functions SDK passes plain JSON between an orchestrator and its activities, and
records every input and result in the orchestration history. Each activity input and
result, each orchestration input and output is a :class:`StepContract`: built as a model,
crossed as ``model_dump(mode="json")`` and read back with ``Model.model_validate(data)``
on the other side (pure and deterministic, so orchestrator code may do it, SPEC D4).
Nothing passes the SDK's own object encoding (``__class__`` envelopes): the wire stays
plain JSON that any version of the code can read.

Compatibility rules (SPEC X6)
-----------------------------
An in-flight orchestration replays its recorded history against new code, and an activity
scheduled by old code may run on new code, so:

- A key is never renamed or removed while an order that may have recorded it is in flight.
- A new field is optional, with the default that reproduces the old behaviour; an input
  recorded before the field existed then still loads.
- Unknown keys are refused (``extra="forbid"``): a misspelt or renamed key fails the first
  test that builds or reads it instead of silently falling back to a default. The price is
  a two-step rollout for a new field: first deploy readers that accept it, then writers that
  send it (a worker that does not know a key refuses the input, and the attempt is left for
  the supervisor).
- An optional field that older writers left out is also left out when it has no value
  (``OMIT_IF_NONE``), so an input serialised by new code has exactly the keys it had before.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, SerializerFunctionWrapHandler, model_serializer, model_validator

from orders.models._types import Contract, InstanceId, OrderKey, QueueName, UtcDatetime


class StepContract(Contract):
    """A contract between workflow steps: camelCase JSON, unknown keys refused.

    Attributes
    ----------
    OMIT_IF_NONE : frozenset of str
        Fields (Python names) left out of the JSON form when they are None, because the
        key was absent in that case before the contract existed (see the module docstring).
    """

    model_config = ConfigDict(extra="forbid")

    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)  # pydantic types the handler's result as Any
        for name in self.OMIT_IF_NONE:
            if getattr(self, name) is None:
                data.pop(type(self).model_fields[name].alias or name, None)
                data.pop(name, None)
        return data


class OwnedRecordInput(StepContract):
    """Input of an activity that writes the state record, fenced on LockedBy (SPEC S4).

    Attributes
    ----------
    order_id : str
        The order.
    instance_id : str
        The orchestration instance that must still own the record (its LockedBy).
    """

    order_id: OrderKey
    instance_id: InstanceId


class BeginInput(OwnedRecordInput):
    """Input of a workflow's first activity: set CompleteBy while the attempt owns the record.

    Attributes
    ----------
    complete_by : datetime
        The attempt's deadline; JSON form is fixed-width ISO 8601 UTC.
    """

    complete_by: UtcDatetime


class BeginResult(StepContract):
    """Result of a workflow's first activity.

    Attributes
    ----------
    fenced : bool
        True if another instance owns the record: the attempt must stop.
    reply_to : str or None
        The client's reply queue (SPEC S8); None when fenced.
    """

    fenced: bool
    reply_to: QueueName | None = None

    @model_validator(mode="after")
    def _reply_to_unless_fenced(self) -> BeginResult:
        if not self.fenced and self.reply_to is None:
            raise ValueError("replyTo: required when the attempt owns the record")
        return self


class FencedResult(StepContract):
    """Result of a fenced write that reports only whether it was refused (SPEC S4).

    Attributes
    ----------
    fenced : bool
        True if another instance owns the record (nothing was written); a rerun that finds
        its own earlier write is not fenced (SPEC X7).
    """

    fenced: bool


class Superseded(StepContract):
    """Workflow output: a newer attempt owns the record; this one wrote nothing more."""

    outcome: Literal["superseded"] = "superseded"


class LeftForSupervisor(StepContract):
    """Workflow output: the attempt stopped without touching the record (SPEC S6, V1).

    Attributes
    ----------
    outcome : {"timedOut", "transientFailure"}
        The durable timer at CompleteBy fired first, or the agent gave up for now.
    step : str
        The remote operation that was not answered in time.
    """

    outcome: Literal["timedOut", "transientFailure"]
    step: str
