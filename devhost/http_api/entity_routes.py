"""Durable entities over HTTP (D10): ``HttpApiHandler``'s entity routes (docs/fidelity.md).

A signal's input is built as the extension builds it: ``application/json`` parsed and
re-serialised compactly, any other body a string, none no input. A JSON body that is not a
string reaches the entity as on Azure, where the SDK's ``get_input`` fails it; we warn (L1).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from devhost.entities.batch import missing_function_error
from devhost.http_api.context import ApiContext
from devhost.http_api.errors import BadRequest
from devhost.http_api.params import (
    CONTINUATION_HEADER,
    check_task_hub,
    decode_token,
    encode_token,
    get_bool,
    get_int,
)
from devhost.http_api.urls import WEBHOOK_PATH
from devhost.taskhub.entity_messages import EntityIdError, check_entity_key, scheduler_id
from devhost.taskhub.inputs import json_value

log = logging.getLogger("devhost.entities")

EMPTY_KEY = "$"
"""Key segment standing for the empty key on GET (the extension's ``EmptyEntityKeySymbol``)."""


def operation_input(body: bytes, media_type: str) -> str | None:
    """Return a signal's ``input`` for a body as the extension builds it; BadRequest if bad JSON."""
    if not body:
        return None
    text = body.decode("utf-8", errors="replace")
    if media_type.lower() != "application/json":
        return json.dumps(text, ensure_ascii=False)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise BadRequest(f"Could not parse JSON content: {exc}") from None
    if not isinstance(value, str):
        log.warning("entity signal: the JSON body %.60s is not a JSON string; as on Azure it "
                    "reaches the entity as is, and the Python SDK's get_input() fails on it "
                    "(send json.dumps(value) as the JSON body, as the SDK's signal_entity "
                    "does)", text)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def entity_routes(ctx: ApiContext, entity_names: Collection[str] | None) -> list[Route]:
    """Return the entity routes; the start hook runs after a signal; ``entity_names`` None: any."""
    known = None if entity_names is None else sorted(n.lower() for n in entity_names)

    async def read_state(request: Request) -> Response:
        check_task_hub(request.query_params, ctx.taskhub.name)
        name, key = request.path_params["name"], request.path_params["key"]
        exists, state = await ctx.call(ctx.taskhub.read_entity, name,
                                       "" if key == EMPTY_KEY else key)
        if not exists:
            return Response(status_code=404)
        return Response(state if state is not None else "null", status_code=200,
                        media_type="application/json")

    async def signal(request: Request) -> Response:
        check_task_hub(request.query_params, ctx.taskhub.name)
        name, key = request.path_params["name"], request.path_params["key"]
        if request.method == "DELETE":
            operation = "delete"
        else:
            operation = request.query_params.get("op") or ""
        try:
            check_entity_key(key)
        except EntityIdError as exc:
            raise BadRequest(str(exc)) from None
        if known is not None and name.lower() not in known:
            raise BadRequest(missing_function_error(name.lower(), known))
        media_type = request.headers.get("content-type", "").split(";")[0].strip()
        input_text = operation_input(await request.body(), media_type)
        await ctx.call(ctx.taskhub.signal_entity, name, key, operation, input_text)
        ctx.work_for(scheduler_id(name, key))
        return Response(status_code=202)

    async def list_entities(request: Request) -> Response:
        # Host behaviour mirrors azure-functions-durable-extension HttpApiHandler.cs
        # (HandleListEntitiesRequestAsync, an entity route without a key) and
        # DurableEntityStatus.cs (the items' shape).
        query = request.query_params
        check_task_hub(query, ctx.taskhub.name)
        fetch_state = get_bool(query, "fetchState", False)
        top = get_int(query, "top", 100, 1, 1000)
        token = decode_token(request.headers)
        page, next_token = await ctx.call(ctx.taskhub.list_entities,
                                          request.path_params["name"], top=top,
                                          continuation=token)
        items = [{"entityId": {"name": name, "key": key},
                  "lastOperationTime": modified,  # DateTime as Newtonsoft writes it
                  "state": json_value(state) if fetch_state else None}
                 for name, key, modified, state in page]
        headers = {CONTINUATION_HEADER: encode_token(next_token)} if next_token else {}
        return JSONResponse(items, headers=headers)

    path = WEBHOOK_PATH + "/entities/{name}/{key}"
    return [Route(path, read_state, methods=["GET"]),
            Route(path, signal, methods=["POST", "DELETE"]),
            Route(WEBHOOK_PATH + "/entities/{name}", list_entities, methods=["GET"]),
            Route(WEBHOOK_PATH + "/entities/{name}/", list_entities, methods=["GET"])]
