"""Operations on one instance: status, events, terminate, suspend, resume, rewind, purge.

Routes and status codes are those of the documented Durable Functions HTTP API, which the
Python SDK's ``DurableOrchestrationClient`` also calls through ``rpcBaseUrl``:

========================================  =========  ======================================
route (under /runtime/webhooks/durabletask) method     answers
========================================  =========  ======================================
instances/{id}                            GET        200 ended, 202 in progress, 404
instances/{id}                            DELETE     200 ``{instancesDeleted}``, 404, 412
instances/{id}/raiseEvent/{eventName}     POST       202, 400 (not JSON), 404, 410
instances/{id}/terminate|suspend|resume   POST       202, 404, 410 (ended), 400 (state)
instances/{id}/rewind                     POST       404, 412 (not Failed), 501
========================================  =========  ======================================
"""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from devhost.http_api.context import ApiContext
from devhost.http_api.errors import BadRequest, error_response
from devhost.http_api.history_view import history_events_json
from devhost.http_api.params import body_as_input_json, check_task_hub, get_bool
from devhost.http_api.status import RETRY_AFTER_S, status_code, status_json
from devhost.http_api.urls import WEBHOOK_PATH
from devhost.taskhub.store import TERMINAL_STATUSES, InstanceGoneError

REWIND_UNSUPPORTED = ("rewind is not supported by the local host's task hub; restart the "
                      "instance instead (POST .../instances/{id}/restart)")
"""Reason given with HTTP 501 for a rewind of a Failed instance."""


def _not_found(instance_id: str) -> JSONResponse:
    # A JSON string body: the SDK's get_status/rewind turn a string into the message.
    return JSONResponse(f"No instance with ID '{instance_id}' found.", status_code=404)


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
        return _not_found(instance_id)
    payload = status_json(record, show_input=show_input)
    if show_history:
        # As the extension: a Pending instance has no history yet (null).
        payload["historyEvents"] = None if record.runtime_status == "Pending" else \
            history_events_json(await ctx.call(ctx.taskhub.get_history, instance_id),
                                show_output=show_output, show_input=show_input)
    code = status_code(record.runtime_status, internal_error_on_failure=fail_500)
    headers = {}
    if code == 202:
        headers = {"Location": str(request.url), "Retry-After": str(RETRY_AFTER_S)}
    return JSONResponse(payload, status_code=code, headers=headers)

async def _purge(ctx: ApiContext, request: Request) -> Response:
    check_task_hub(request.query_params, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    record = await ctx.instance(instance_id)
    if record.runtime_status not in TERMINAL_STATUSES:
        return error_response(412, f"instanceId: only instances in a terminal state "
                                   f"(Completed, Failed, Terminated) can be purged; "
                                   f"'{instance_id}' is {record.runtime_status}")
    deleted = await ctx.call(ctx.taskhub.purge, instance_id)
    return JSONResponse({"instancesDeleted": deleted}, status_code=200)

async def _raise_event(ctx: ApiContext, request: Request) -> Response:
    check_task_hub(request.query_params, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    record = await ctx.instance(instance_id)
    if record.runtime_status in TERMINAL_STATUSES:
        raise InstanceGoneError(f"Instance with ID '{instance_id}' is gone: it is "
                                f"{record.runtime_status}")
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise BadRequest("Content-Type: only application/json request content is "
                         f"supported, got {media_type or 'none'!r}")
    data = body_as_input_json(await request.body(), "eventData")
    # raise_event re-checks existence and state in its own transaction.
    await ctx.call(ctx.taskhub.raise_event, instance_id,
                   request.path_params["event_name"], data)
    return Response(status_code=202)

async def _operation(ctx: ApiContext, request: Request) -> Response:
    query = request.query_params
    check_task_hub(query, ctx.taskhub.name)
    instance_id = request.path_params["instance_id"]
    op = request.path_params["operation"].lower()
    reason = query.get("reason")
    if op == "rewind":
        record = await ctx.call(ctx.taskhub.get_instance, instance_id)
        if record is None:
            return _not_found(instance_id)
        if record.runtime_status != "Failed":
            return JSONResponse(
                f"This orchestration has status {record.runtime_status}, but only "
                "orchestrations in the \"Failed\" state can be rewound.", status_code=412)
        return JSONResponse(REWIND_UNSUPPORTED, status_code=501)
    actions = {"terminate": ctx.taskhub.terminate, "suspend": ctx.taskhub.suspend,
               "resume": ctx.taskhub.resume}
    if op not in actions:
        return error_response(404, f"operation: unknown instance operation {op!r}; use "
                                   "terminate, suspend, resume, rewind, restart or "
                                   "raiseEvent/{eventName}")
    await ctx.call(actions[op], instance_id, reason)
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
