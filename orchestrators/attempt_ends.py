"""How an order workflow attempt ends without completing, the same in every version (S6, S7).

Both the live versions (:mod:`orchestrators.live_workflow`) and the frozen ones
(:mod:`orchestrators.frozen_workflows`) end here, so what they schedule is part of every
recorded history: a change that schedules another activity, or the same ones in another
order, breaks in-flight orders of every version (X6). Deterministic; logs only when not
replaying (D4).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from azure.durable_functions import DurableOrchestrationContext

from orchestrators.calls import call
from orders.models.activities import ALERT_OPERATOR, FAIL_ORDER, PUBLISH_STATUS
from orders.models.attempt_io import AttemptOutcome, Failed
from orders.models.compensation_io import FailOrderInput
from orders.models.messages import AgentReply, StatusKind
from orders.models.notice_io import AlertOperatorInput, PublishStatusInput
from orders.models.step_io import LeftForSupervisor, Superseded
from orders.observability.logs import replay_safe_logger

log = logging.getLogger("orders.workflow")

Attempt = Generator[Any, Any, AttemptOutcome]
"""An attempt's generator: yields the SDK's tasks, returns the attempt's outcome."""


def left_for_supervisor(context: DurableOrchestrationContext, order_key: str, operation: str,
                        reply: AgentReply | None) -> LeftForSupervisor:
    """Timer first (``reply`` None) or a transient failure: stop, the record untouched (S6)."""
    replay_safe_logger(context, log, order_key).info(
        "%s %s; left for the supervisor", operation,
        "timed out" if reply is None else "failed transiently")
    return LeftForSupervisor(
        outcome="timedOut" if reply is None else "transientFailure", step=operation)


def fail(context: DurableOrchestrationContext, order_key: str, reply_to: str, operation: str,
         reason: str | None) -> Attempt:
    """Non-transient failure: alert, then compensation or Error (S7, S9).

    ``reply_to`` is told only when the order ends in Error; ``superseded`` if another
    attempt owns the record.
    """
    iid = context.instance_id
    why = f"{operation} failed permanently: {reason}"
    failed = yield from call(context, FAIL_ORDER, FailOrderInput(
        order_key=order_key, instance_id=iid, reason=f"attempt {iid}: {why}"))
    if failed.fenced:
        return Superseded()
    yield from call(context, ALERT_OPERATOR, AlertOperatorInput(
        kind="OrderError", order_key=order_key, instance_id=iid, reason=why))
    if failed.state == "Error":
        yield from call(context, PUBLISH_STATUS, PublishStatusInput(
            order_key=order_key, instance_id=iid, reply_to=reply_to,
            status=StatusKind.ORDER_FAILED, reason=why))
        return Failed(outcome="error", step=operation, reason=reason)
    return Failed(outcome="compensating", step=operation, reason=reason)
