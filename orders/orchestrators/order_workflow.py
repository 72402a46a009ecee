"""The order workflow, version 1: one attempt of one order (SPEC S4-S7).

validate and reserve (local) -> charge payment (payment agent) -> create shipment (shipping
agent) -> Processed, each remote step racing the agent's reply against a durable timer at
CompleteBy. The code is deterministic (context time only, no I/O; settings come in the
input) and logs only when not replaying (SPEC D4).

Outcomes
--------
- Reply first, success: next step; after the last one, Processed if LockedBy still names
  this instance, then "OrderCompleted" to the client.
- Timer first: stop waiting and finish without touching the state record; it stays
  Processing with an expired CompleteBy for the supervisor (S6). A late reply is ignored.
- Transient failure reply (agent retries or circuit exhausted): the same as a timeout, the
  supervisor schedules a new attempt once CompleteBy has passed.
- Permanent failure reply: Error, an operator alert and "OrderFailed" (S7). Compensating
  the steps already done is the compensation workflow's job (S9).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from datetime import datetime, timedelta
from typing import Any

from orders import names
from orders.models import format_utc
from orders.models.messages import AgentOutcome, AgentRequest, Operation, Service

log = logging.getLogger("orders.workflow")

WORKFLOW_VERSION = 1

REMOTE_STEPS: tuple[tuple[Service, Operation], ...] = (("payment", "charge"),
                                                       ("shipping", "ship"))
"""The remote steps of version 1, in order."""


def agent_request(context: Any, order: dict[str, Any], service: Service, operation: Operation,
                  deadline: datetime, max_attempts: int) -> AgentRequest:
    """Build the request of one remote step (stable ids, SPEC A2, A4)."""
    order_id = order["orderId"]
    if operation == "charge":
        payload = {"orderId": order_id, "amount": order["totalPrice"],
                   "currency": order["currency"]}
    else:
        payload = {"orderId": order_id,
                   "lines": [{"sku": li["sku"], "quantity": li["quantity"]}
                             for li in order["lines"]]}
    return AgentRequest(
        message_id=f"{context.instance_id}:{operation}", order_id=order_id,
        instance_id=context.instance_id, service=service, operation=operation,
        idempotency_key=f"{order_id}:{operation}", complete_by=deadline,
        max_attempts=max_attempts, event_name=f"{operation}-reply", payload=payload)


def remote_step(context: Any, request: AgentRequest,
                deadline: datetime) -> Generator[Any, Any, dict[str, Any] | None]:
    """Send a request to its agent and race the reply against the deadline (SPEC S6).

    Returns
    -------
    dict or None
        The agent's reply, or None if the durable timer at CompleteBy fired first.
    """
    yield context.call_activity(names.SEND_AGENT_REQUEST, request.model_dump(mode="json"))
    reply = context.wait_for_external_event(request.event_name)
    timer = context.create_timer(deadline)
    winner = yield context.task_any([reply, timer])
    if winner == reply:
        timer.cancel()
        return reply.result
    return None


def run_v1(context: Any, data: dict[str, Any]) -> Generator[Any, Any, dict[str, Any]]:
    """Version 1 of the workflow; see the module docstring."""
    order_id, iid = data["orderId"], context.instance_id
    deadline = context.current_utc_datetime + timedelta(seconds=data["deadlineS"])
    begun = yield context.call_activity(names.BEGIN_ATTEMPT, {
        "orderId": order_id, "instanceId": iid, "completeBy": format_utc(deadline)})
    if begun["fenced"]:
        return {"outcome": "superseded"}
    reply_to = begun["replyTo"]
    order = yield context.call_activity(names.LOAD_ORDER, order_id)
    yield context.call_activity(names.RESERVE_INVENTORY,
                                {"orderId": order_id, "lines": order["lines"]})
    for service, operation in REMOTE_STEPS:
        request = agent_request(context, order, service, operation, deadline,
                                data["agentMaxAttempts"])
        reply = yield from remote_step(context, request, deadline)
        if reply is None or reply["outcome"] == AgentOutcome.TRANSIENT_FAILURE:
            if not context.is_replaying:
                log.info("order %s attempt %s: %s %s; left for the supervisor", order_id,
                         iid, operation, "timed out" if reply is None else "failed transiently")
            return {"outcome": "timedOut" if reply is None else "transientFailure",
                    "step": operation}
        if reply["outcome"] == AgentOutcome.PERMANENT_FAILURE:
            return (yield from fail(context, order_id, reply_to, operation, reply["reason"]))
    done = yield context.call_activity(names.FINISH_ATTEMPT, {
        "orderId": order_id, "instanceId": iid, "state": "Processed"})
    if done["fenced"]:
        return {"outcome": "superseded"}
    yield context.call_activity(names.PUBLISH_STATUS, {
        "orderId": order_id, "replyTo": reply_to, "status": "OrderCompleted"})
    return {"outcome": "processed"}


def fail(context: Any, order_id: str, reply_to: str, operation: str,
         reason: str | None) -> Generator[Any, Any, dict[str, Any]]:
    """Non-transient failure: Error, operator alert, OrderFailed (SPEC S7)."""
    iid = context.instance_id
    why = f"{operation} failed permanently: {reason}"
    done = yield context.call_activity(names.FINISH_ATTEMPT, {
        "orderId": order_id, "instanceId": iid, "state": "Error"})
    if done["fenced"]:
        return {"outcome": "superseded"}
    yield context.call_activity(names.ALERT_OPERATOR, {
        "kind": "OrderError", "orderId": order_id, "instanceId": iid, "reason": why})
    yield context.call_activity(names.PUBLISH_STATUS, {
        "orderId": order_id, "replyTo": reply_to, "status": "OrderFailed", "reason": why})
    return {"outcome": "error", "step": operation, "reason": reason}


WORKFLOWS = {1: run_v1}
"""Workflow versions still registered; an order runs the version it started with (X6)."""


def order_workflow(context: Any) -> Generator[Any, Any, dict[str, Any]]:
    """Dispatch one attempt to the workflow version its order started with (SPEC X6)."""
    data = context.get_input()
    version = data.get("workflowVersion", WORKFLOW_VERSION)
    run = WORKFLOWS.get(version)
    if run is None:
        yield context.call_activity(names.ALERT_OPERATOR, {
            "kind": "UnknownWorkflowVersion", "orderId": data.get("orderId"),
            "instanceId": context.instance_id,
            "reason": f"workflow version {version} is not registered; known: "
                      f"{sorted(WORKFLOWS)}"})
        return {"outcome": "unknownWorkflowVersion"}
    return (yield from run(context, data))
