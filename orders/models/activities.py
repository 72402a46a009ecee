"""Every activity of both workflows, declared once: its name, binding and two contracts.

The orchestrators schedule by a declaration (``orchestrators.calls.call``) and
``activities.blueprint`` registers the body under it; it lives in the core because the
orchestrators may not import the activities. Names never change while an order may be in
flight (X6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from orders.models.agent_io import SendAgentRequestInput
from orders.models.attempt_io import (
    BeginAttemptInput,
    BeginAttemptResult,
    FinishAttemptInput,
    ReserveInventoryInput,
    ReserveInventoryResult,
)
from orders.models.compensation_io import (
    PENDING_UNDOS_RESULT,
    BeginCompensationInput,
    BeginCompensationResult,
    FailOrderInput,
    FailOrderResult,
    FinishCompensationInput,
    RecordStepInput,
    RecordStepResult,
    ReleaseInventoryInput,
    ReleaseInventoryResult,
)
from orders.models.memo import ParseMemo, value_key
from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from orders.models.order import Order
from orders.models.step_io import FencedResult

In = TypeVar("In")
Out = TypeVar("Out")


class ActivityResultError(ValueError):
    """An activity's result breaks its declared result contract (the instance fails)."""


@dataclass(frozen=True, eq=False)
class Activity(Generic[In, Out]):
    """One activity as the orchestrators and the host see it; a ``str`` input crosses bare."""

    name: str
    input: type[In]
    result: TypeAdapter[Out] = field(repr=False)
    binding: str = "data"

    def payload(self, value: In) -> Any:
        """Return the JSON form of ``value`` that goes into the history."""
        if not isinstance(value, self.input):
            raise TypeError(f"activity {self.name}: input must be a {self.input.__name__}, "
                            f"got {type(value).__name__}")
        return value.model_dump(mode="json") if isinstance(value, BaseModel) else value

    def read_result(self, raw: Any) -> Out:
        """Read the result the history recorded with the result contract.

        Raises
        ------
        ActivityResultError
            Naming the activity, each field at fault and its rule.
        """
        if not isinstance(raw, dict | list | str):
            return self._validate(raw)
        key = value_key(raw)
        return RESULTS.get((self, key), lambda: self._validate(raw), weight=len(key))

    def _validate(self, raw: Any) -> Out:
        try:
            return self.result.validate_python(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(result)'}: {e['msg']}"
                                 for e in exc.errors())
            raise ActivityResultError(f"activity {self.name}: its result breaks its contract "
                                      f"{exc.title}: {problems}") from exc


RESULTS = ParseMemo()
"""Results read by every replay of every orchestrator in this process (:mod:`.memo`)."""


def _declare(name: str, input_: type[In], result: type[Out] | TypeAdapter[Out],
             binding: str = "data") -> Activity[In, Out]:
    adapter = result if isinstance(result, TypeAdapter) else TypeAdapter(result)
    return Activity(name, input_, adapter, binding)


BEGIN_ATTEMPT = _declare("begin_attempt", BeginAttemptInput, BeginAttemptResult)
LOAD_ORDER = _declare("load_order", str, Order, binding="orderId")
RESERVE_INVENTORY = _declare("reserve_inventory", ReserveInventoryInput,
                             ReserveInventoryResult)
FINISH_ATTEMPT = _declare("finish_attempt", FinishAttemptInput, FencedResult)
SEND_AGENT_REQUEST = _declare("send_agent_request", SendAgentRequestInput, str)
PUBLISH_STATUS: Activity[PublishStatusInput, None] = _declare(
    "publish_status", PublishStatusInput, TypeAdapter(None))
ALERT_OPERATOR: Activity[AlertOperatorInput, None] = _declare(
    "alert_operator", AlertOperatorInput, TypeAdapter(None))
RECORD_STEP = _declare("record_step", RecordStepInput, RecordStepResult)
FAIL_ORDER = _declare("fail_order", FailOrderInput, FailOrderResult)
BEGIN_COMPENSATION = _declare("begin_compensation", BeginCompensationInput,
                              BeginCompensationResult)
PENDING_UNDOS = _declare("pending_undos", str, PENDING_UNDOS_RESULT, binding="orderId")
RELEASE_INVENTORY = _declare("release_inventory", ReleaseInventoryInput,
                             ReleaseInventoryResult)
FINISH_COMPENSATION = _declare("finish_compensation", FinishCompensationInput, FencedResult)

DECLARED: tuple[Activity[Any, Any], ...] = (
    BEGIN_ATTEMPT, LOAD_ORDER, RESERVE_INVENTORY, SEND_AGENT_REQUEST, FINISH_ATTEMPT,
    PUBLISH_STATUS, ALERT_OPERATOR, RECORD_STEP, FAIL_ORDER, BEGIN_COMPENSATION,
    PENDING_UNDOS, RELEASE_INVENTORY, FINISH_COMPENSATION)
