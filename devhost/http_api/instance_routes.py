"""Operations on one instance: status, events, terminate, suspend, resume, rewind, purge.

Routes, codes and texts (docs/fidelity.md) are azure-functions-durable-extension
``HttpApiHandler.cs`` and ``ContextImplementations/DurableClient.cs``: a 404 or 410 has no
body (``request.CreateResponse(status)``), a 500 the catch-all ``Message`` and the text.
"""

from __future__ import annotations

import logging
from functools import partial

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from devhost.http_api.context import ApiContext
from devhost.http_api.errors import INTERNAL_ERROR, BadRequest, error_response
from devhost.http_api.history_view import history_events_json
from devhost.http_api.params import body_as_json_payload, check_task_hub, get_bool
from devhost.http_api.status import RETRY_AFTER_S, status_code, status_json
from devhost.http_api.urls import WEBHOOK_PATH
from devhost.taskhub.store import TERMINAL_STATUSES

log = logging.getLogger("devhost.events")

INVALID_OPERATION = "System.InvalidOperationException"
"""``ExceptionType`` of the extension's refusals of suspend, resume and rewind."""

SUSPENDABLE = frozenset({"Pending", "Running", "ContinuedAsNew"})
"""States a suspend applies to (``DurableClient.IsOrchestrationSuspendable``)."""

EVENT_TEXT_ISSUE = "https://github.com/Azure/azure-functions-durable-python/issues/295"
"""Public issue: an event raised by the SDK's client reaches the orchestrator as JSON text."""

_warned_event_names: set[str] = set()


def _empty(status: int) -> Response:
    return Response(status_code=status)


def _refused(message: str) -> JSONResponse:
    # DurableClient throws InvalidOperationException; HttpApiHandler's catch-all answers 500.
    return error_response(500, message, INTERNAL_ERROR, INVALID_OPERATION)


async def _get_status(ctx: ApiContext, request: Request) -> Response:
    query = request.query_params
    check_task_hub(query, ctx.taskhub.name)
    show_history = get_bool(query, "showHistory", False)
    show_output = get_bool(query, "showHistoryOutput", False)
    show_input = get_bool(query, "showInput", True)
    fail_500 = get_bool(query, "returnInternalServerErrorOnFailure", False)
    instance_id = request.path_params["instance_id"]
    record = await ctx.call(ctx.taskhub.get_instance, instance_id)
    if record is None:
        return _empty(404)
    payload = status_json(record, show_input=show_input)
    if show_history:
        # As the extension: a Pending instance has no history yet (null).
        # Read and converted off the loop: a long history is work, and the loop may be the
        # app's own (its durable clients are answered in the process, .in_process).
        payload["historyEvents"] = None if record.runtime_status == "Pending" else \
            await ctx.call(lambda: history_events_json(
                ctx.taskhub.get_history(instance_id), show_output=show_output,
                show_input=show_input))
    code = status_code(record.runtime_status, internal_error_on_failure=fail_500)
    headers = {}
    if code == 202:
        headers = {"Location": str(request.url), "Retry-After": str(RETRY_AFTER_S)}
    return JSONResponse(payload, status_code=code, headers=headers)


async def _purge(ctx: ApiContext, request: Request) -> Response:
    # HandleDeleteHistoryByIdRequestAsync: 404 if unknown, else the backend purges it
    # whatever its state (AzureTableTrackingStore.PurgeInstanceHistoryAsync(instanceId)).
    check_task_hub(request.query_params, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    deleted = await ctx.call(ctx.taskhub.purge, instance_id, only_terminal=False)
    if not deleted:
        return _empty(404)
    return JSONResponse({"instancesDeleted": deleted}, status_code=200)


async def _raise_event(ctx: ApiContext, request: Request) -> Response:
    # HttpApiHandler.HandleRaiseEventRequestAsync (Durable Functions extension): the
    # instance is looked up, 404/410 answered, before the body is read.
    check_task_hub(request.query_params, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    record = await ctx.call(ctx.taskhub.get_instance, instance_id)
    if record is None:
        return _empty(404)
    if record.runtime_status in TERMINAL_STATUSES:
        return _empty(410)
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        text = "Only application/json request content is supported"
        raise BadRequest(text, summary=text)
    body = await request.body()
    if not body.strip():  # ConvertToJToken("") is a JsonReaderException on Azure
        raise BadRequest("the request body is empty", summary="Invalid JSON content")
    data = body_as_json_payload(body)
    _warn_event_text(request.path_params["event_name"], data)
    ctx.check_payload(f"external event '{request.path_params['event_name']}'", data)
    # raise_event re-checks existence and state in its own transaction.
    await ctx.call(ctx.taskhub.raise_event, instance_id,
                   request.path_params["event_name"], data)
    ctx.work_for(instance_id)
    return Response(status_code=202)


def _warn_event_text(event_name: str, data: str | None) -> None:
    if event_name in _warned_event_names or data is None or not data.startswith('"'):
        return
    _warned_event_names.add(event_name)
    log.warning(
        "event '%s' was raised with a JSON string as its data (the Python SDK's "
        "raise_event sends json.dumps(value) that way): as on Azure, the orchestrator's "
        "wait_for_external_event result is that string, the value's JSON text, not the "
        "value (%s); json.loads it in the orchestrator", event_name, EVENT_TEXT_ISSUE)


async def _operation(ctx: ApiContext, request: Request) -> Response:
    query = request.query_params
    check_task_hub(query, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    op = request.path_params["operation"].lower()
    reason = query.get("reason")
    if op not in ("terminate", "suspend", "resume", "rewind"):
        return error_response(404, f"operation: unknown instance operation {op!r}; use "
                                   "terminate, suspend, resume, rewind, restart or "
                                   "raiseEvent/{eventName}")
    record = await ctx.call(ctx.taskhub.get_instance, instance_id)
    if record is None:
        return _empty(404)
    status = record.runtime_status
    if op == "rewind":
        if status in ("Completed", "Terminated"):
            return _empty(410)
        if status != "Failed":
            return _refused("The rewind operation is only supported on failed "
                            "orchestration instances.")
        await ctx.call(ctx.taskhub.rewind, instance_id, reason)
        ctx.work_for(instance_id)
        return Response(status_code=202)
    if status in TERMINAL_STATUSES:
        return _empty(410)
    if op == "suspend" and status not in SUSPENDABLE:
        return _refused(f"Cannot suspend the orchestration instance {instance_id} because "
                        f"instance is in the {status} state.")
    if op == "resume" and status != "Suspended":
        return _refused(f"Cannot resume the orchestration instance {instance_id} because "
                        f"instance is in the {status} state.")
    actions = {"terminate": ctx.taskhub.terminate, "suspend": ctx.taskhub.suspend,
               "resume": ctx.taskhub.resume}
    await ctx.call(actions[op], instance_id, reason)
    ctx.work_for(instance_id)
    return Response(status_code=202)


def instance_routes(ctx: ApiContext) -> list[Route]:
    """Return the single-instance routes bound to ``ctx``."""
    base = WEBHOOK_PATH + "/instances/{instance_id}"
    return [
        Route(base, partial(_get_status, ctx), methods=["GET"]),
        Route(base, partial(_purge, ctx), methods=["DELETE"]),
        Route(base + "/raiseEvent/{event_name}", partial(_raise_event, ctx), methods=["POST"]),
        Route(base + "/{operation}", partial(_operation, ctx), methods=["POST"]),
    ]
