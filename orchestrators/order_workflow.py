"""The order workflow: one attempt of one order, in every registered version (SPEC S4-S7, X6).

Versions
--------
- 1: reserve inventory (local) -> charge payment (payment agent) -> create shipment
  (shipping agent) -> Processed.
- 2, "charge on dispatch": reserve inventory -> create shipment -> charge payment ->
  Processed. The customer is charged only once the goods are on their way; a declined
  charge then cancels the shipment (compensation, S9).

Each remote step races the agent's reply against a durable timer at CompleteBy. Both
versions write a compensation log entry after each completed step (reserve inventory, a
successful charge, a successful shipment), idempotent on OrderID + step (S9); a remote
step is also logged as *requested* by the activity that sends it, before it goes out, so
a request that never got an answer is undone too. The code is
deterministic (context time only, no I/O; settings come in the input) and logs only when
not replaying (SPEC D4).

Which version runs (X6)
-----------------------
The starter fixes an order's version when it claims the first attempt (the
``WORKFLOW_VERSION`` setting then) and every attempt gets it in its input; the dispatcher
runs ``WORKFLOWS[version]``, so an order started under version 1 finishes under version 1
whatever the setting says later. An unknown version raises an operator alert and ends the
attempt without touching the record (it is retried by the supervisor, so registering the
version fixes it). A version is frozen once orders run under it: anything that changes the
sequence of activities, timers and events an attempt schedules is a new version, because
an in-flight attempt replays its history against this code. Roll out by registering the
new version everywhere first (``WORKFLOW_VERSION`` unchanged), then switching the setting;
remove a version only when no Pending, Processing or Compensating order uses it.

Outcomes
--------
- Reply first, success: log the step, next step; after the last one, Processed if LockedBy
  still names this instance, then "OrderCompleted" to the client.
- Timer first: stop waiting and finish without touching the state record; it stays
  Processing with an expired CompleteBy for the supervisor (S6). A late reply is ignored.
- Transient failure reply (agent retries or circuit exhausted): the same as a timeout, the
  supervisor schedules a new attempt once CompleteBy has passed.
- Permanent failure reply: an operator alert (S7) and the order is handed over to
  compensation (Compensating, see :mod:`orders.compensation`); with nothing to undo it
  is set to Error and the client gets "OrderFailed".
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from datetime import datetime, timedelta
from typing import Any

from orchestrators.remote import remote_step
from orders import names
from orders.lifecycle.ids import idempotency_key, reply_event_name, request_message_id
from orders.models import Step, format_utc
from orders.models.messages import AgentOutcome, AgentRequest, Operation, Service
from orders.observability.logs import replay_safe_logger

log = logging.getLogger("orders.workflow")

WORKFLOW_VERSION = 1
"""Version assumed for an input without ``workflowVersion`` (attempts started before X6)."""

RemoteSteps = tuple[tuple[Service, Operation], ...]

REMOTE_STEPS: RemoteSteps = names.WORKFLOW_REMOTE_STEPS[1]  # type: ignore[assignment]
"""The remote steps of version 1, in order."""

REMOTE_STEPS_V2: RemoteSteps = names.WORKFLOW_REMOTE_STEPS[2]  # type: ignore[assignment]
"""The remote steps of version 2 ("charge on dispatch"), in order."""


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
        message_id=request_message_id(context.instance_id, operation), order_id=order_id,
        instance_id=context.instance_id, service=service, operation=operation,
        idempotency_key=idempotency_key(order_id, operation), complete_by=deadline,
        max_attempts=max_attempts, event_name=reply_event_name(operation), payload=payload)


def run_steps(context: Any, data: dict[str, Any],
              remote_steps: RemoteSteps) -> Generator[Any, Any, dict[str, Any]]:
    """Run one attempt: reserve, then ``remote_steps`` in order; see the module docstring."""
    order_id, iid = data["orderId"], context.instance_id
    deadline = context.current_utc_datetime + timedelta(seconds=data["deadlineS"])
    begun = yield context.call_activity(names.BEGIN_ATTEMPT, {
        "orderId": order_id, "instanceId": iid, "completeBy": format_utc(deadline)})
    if begun["fenced"]:
        return {"outcome": "superseded"}
    reply_to = begun["replyTo"]
    order = yield context.call_activity(names.LOAD_ORDER, order_id)
    reservation = yield context.call_activity(names.RESERVE_INVENTORY,
                                              {"orderId": order_id, "lines": order["lines"]})
    yield from record_step(context, data, Step.RESERVE_INVENTORY, reservation)
    for service, operation in remote_steps:
        request = agent_request(context, order, service, operation, deadline,
                                data["agentMaxAttempts"])
        reply = yield from remote_step(context, request, deadline,
                                       data.get("workflowVersion", WORKFLOW_VERSION))
        if reply is None or reply["outcome"] == AgentOutcome.TRANSIENT_FAILURE:
            replay_safe_logger(context, log, order_id).info(
                "%s %s; left for the supervisor", operation,
                "timed out" if reply is None else "failed transiently")
            return {"outcome": "timedOut" if reply is None else "transientFailure",
                    "step": operation}
        if reply["outcome"] == AgentOutcome.PERMANENT_FAILURE:
            return (yield from fail(context, order_id, reply_to, operation, reply["reason"]))
        yield from record_step(context, data, Step(operation), reply["result"])
    done = yield context.call_activity(names.FINISH_ATTEMPT, {
        "orderId": order_id, "instanceId": iid, "state": "Processed"})
    if done["fenced"]:
        return {"outcome": "superseded"}
    yield context.call_activity(names.PUBLISH_STATUS, {
        "orderId": order_id, "instanceId": iid, "replyTo": reply_to,
        "status": "OrderCompleted"})
    return {"outcome": "processed"}


def record_step(context: Any, data: dict[str, Any], step: Step,
                result: dict[str, Any]) -> Generator[Any, Any, None]:
    """Write the compensation log entry of a completed step (SPEC S9)."""
    yield context.call_activity(names.RECORD_STEP, {
        "orderId": data["orderId"], "instanceId": context.instance_id,
        "workflowVersion": data.get("workflowVersion", WORKFLOW_VERSION),
        "step": step.value, "result": result})


def run_v1(context: Any, data: dict[str, Any]) -> Generator[Any, Any, dict[str, Any]]:
    """Version 1: reserve -> charge -> ship."""
    return (yield from run_steps(context, data, REMOTE_STEPS))


def run_v2(context: Any, data: dict[str, Any]) -> Generator[Any, Any, dict[str, Any]]:
    """Version 2, charge on dispatch: reserve -> ship -> charge."""
    return (yield from run_steps(context, data, REMOTE_STEPS_V2))


def fail(context: Any, order_id: str, reply_to: str, operation: str,
         reason: str | None) -> Generator[Any, Any, dict[str, Any]]:
    """Non-transient failure: alert, then compensation or Error (SPEC S7, S9)."""
    iid = context.instance_id
    why = f"{operation} failed permanently: {reason}"
    failed = yield context.call_activity(names.FAIL_ORDER, {
        "orderId": order_id, "instanceId": iid, "reason": f"attempt {iid}: {why}"})
    if failed["fenced"]:
        return {"outcome": "superseded"}
    yield context.call_activity(names.ALERT_OPERATOR, {
        "kind": "OrderError", "orderId": order_id, "instanceId": iid, "reason": why})
    if failed["state"] == "Error":
        yield context.call_activity(names.PUBLISH_STATUS, {
            "orderId": order_id, "instanceId": iid, "replyTo": reply_to,
            "status": "OrderFailed", "reason": why})
        return {"outcome": "error", "step": operation, "reason": reason}
    return {"outcome": "compensating", "step": operation, "reason": reason}


WORKFLOWS = {1: run_v1, 2: run_v2}
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
