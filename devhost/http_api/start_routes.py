"""Starting and restarting instances over HTTP (the documented API and the SDK's ``start_new``)."""

from __future__ import annotations

import json
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from azurekit.instance_ids import new_instance_id, validate_instance_id
from devhost.http_api.context import ApiContext
from devhost.http_api.errors import BadRequest
from devhost.http_api.params import (
    body_as_json_payload,
    check_known_params,
    check_task_hub,
    get_bool,
    get_seconds,
)
from devhost.http_api.urls import WEBHOOK_PATH

START_PARAMS = frozenset({"version", "timeout", "pollingInterval", "taskHub", "connection",
                          "code"})
"""Query parameters the start route takes (``code`` is the system key, ignored locally)."""


log = logging.getLogger("devhost.http")


def warn_undecodable_string(name: str, instance_id: str, input_json: str | None) -> None:
    """Warn when a start's input is a JSON string the Python SDK cannot decode (L1-L3).

    The SDK's ``get_input()`` reads a string input as JSON text (``json.loads``), so a
    plain HTTP client posting ``"Rome"`` starts an instance whose ``get_input()`` raises,
    on Azure too (docs/fidelity.md, "Inputs, outputs and event data"); the SDK client's
    ``start_new`` posts the value's JSON text as the string, which decodes.
    """
    if not input_json or not input_json.startswith('"'):
        return
    text = json.loads(input_json)
    try:
        json.loads(text)
    except ValueError:
        log.warning("start of %s (instance %s): the input is the JSON string %s, which the "
                    "Python SDK's get_input() decodes as JSON text and fails on, on Azure too; "
                    "post the value's JSON text as the string (as the SDK client's start_new "
                    "does), or an object", name, instance_id, input_json[:80])


RESTART_UNKNOWN = "InstanceId does not match a valid orchestration instance."
"""The error ``Message`` of a restart of an unknown instance (``HttpApiHandler``)."""


def checked_instance_id(value: str) -> str:
    """Validate a user-chosen instance id, a refusal as HTTP 400 (D2)."""
    try:
        return validate_instance_id(value)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def start_routes(ctx: ApiContext) -> list[Route]:
    """Return the start and restart routes bound to ``ctx``."""

    async def start(request: Request) -> JSONResponse:
        query = request.query_params
        check_known_params(query, START_PARAMS)
        check_task_hub(query, ctx.taskhub.name)
        name = request.path_params["function_name"]
        raw_id = request.path_params.get("instance_id")
        instance_id = new_instance_id() if raw_id is None else checked_instance_id(raw_id)
        # As HttpApiHandler.HandleStartOrchestratorRequestAsync: the body is read as JSON
        # first ("Invalid JSON content"), then StartNewAsync checks the function name.
        input_json = body_as_json_payload(await request.body())
        ctx.check_orchestrator(name)
        timeout_s = get_seconds(query, "timeout")
        interval_s = get_seconds(query, "pollingInterval")
        warn_undecodable_string(name, instance_id, input_json)
        await ctx.create(name, instance_id, input_json, query.get("version") or None)
        return await ctx.wait_or_check_status(instance_id, timeout_s, interval_s)

    async def restart(request: Request) -> JSONResponse:
        # Host behaviour mirrors azure-functions-durable-extension HttpApiHandler.cs
        # (HandleRestartInstanceRequestAsync) and DurableClient.RestartAsync: an unknown id
        # is 400 with the extension's texts (its typo included); the restart is a new start
        # with the old name and input and the default version, so restarting a running
        # instance under its own id fails as such a start does (500).
        query = request.query_params
        check_task_hub(query, ctx.taskhub.name)
        requested = request.path_params["instance_id"]
        old = await ctx.call(ctx.taskhub.get_instance, requested)
        if old is None:
            raise BadRequest(f"An orchestrastion with the instanceId {requested} was not "
                             "found.", summary=RESTART_UNKNOWN)
        with_new_id = get_bool(query, "restartWithNewInstanceId", True)
        instance_id = new_instance_id() if with_new_id else old.instance_id
        timeout_s = get_seconds(query, "timeout")
        interval_s = get_seconds(query, "pollingInterval")
        await ctx.create(old.name, instance_id, old.input, None)
        return await ctx.wait_or_check_status(instance_id, timeout_s, interval_s)

    base = WEBHOOK_PATH + "/orchestrators/{function_name}"
    return [
        Route(base, start, methods=["POST"]),
        # ``path`` so that an id with "/" (raw or %2F) is captured whole and refused rather
        # than routed elsewhere, and an empty id (".../orchestrators/Fn/") is refused too.
        Route(base + "/{instance_id:path}", start, methods=["POST"]),
        Route(WEBHOOK_PATH + "/instances/{instance_id}/restart", restart, methods=["POST"]),
    ]

