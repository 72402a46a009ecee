"""Listing (``top``, default 100, and continuation-token paging) and purging many instances."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from devhost.http_api.context import ApiContext
from devhost.http_api.params import (
    CONTINUATION_HEADER,
    check_task_hub,
    decode_token,
    encode_token,
    get_bool,
    get_int,
    get_statuses,
    get_time,
)
from devhost.http_api.status import status_json
from devhost.http_api.urls import WEBHOOK_PATH
from devhost.taskhub.store import ALL_STATUSES, TERMINAL_STATUSES

log = logging.getLogger("devhost.http")

DEFAULT_PAGE_SIZE = 100
"""Page size when ``top`` is not given (the extension's default)."""

MAX_PAGE_SIZE = 1000
"""Largest ``top`` accepted (the task hub's limit)."""


def query_routes(ctx: ApiContext) -> list[Route]:
    """Return the list and purge-many routes bound to ``ctx``."""

    async def list_instances(request: Request) -> Response:
        query = request.query_params
        check_task_hub(query, ctx.taskhub.name)
        statuses = get_statuses(query)
        created_from = get_time(query, "createdTimeFrom")
        created_to = get_time(query, "createdTimeTo")
        top = get_int(query, "top", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
        # OrchestrationStatusQueryCondition.ShowInput is true unless the query says false.
        show_input = get_bool(query, "showInput", True)
        token = decode_token(request.headers)
        if statuses is not None:
            statuses = [s for s in statuses if s in ALL_STATUSES]
            if not statuses:  # only statuses no instance can have (Canceled)
                return JSONResponse([])
        def page_json() -> tuple[list[dict[str, Any]], Any]:
            # Off the loop, converted too: a page holds up to 1000 instances, and the loop
            # may be the app's own (its durable clients are answered in the process).
            page, next_token = ctx.taskhub.query(
                statuses=statuses, created_from=created_from, created_to=created_to,
                prefix=query.get("instanceIdPrefix") or None, top=top, continuation=token)
            return [status_json(r, show_input=show_input) for r in page], next_token

        payload, next_token = await ctx.call(page_json)
        headers: dict[str, str] = {}
        if next_token is not None:
            headers[CONTINUATION_HEADER] = encode_token(next_token)
        return JSONResponse(payload, headers=headers)

    async def purge_many(request: Request) -> Response:
        # Host behaviour mirrors azure-functions-durable-extension HttpApiHandler.cs
        # (HandleDeleteHistoryWithFiltersRequestAsync) and durabletask
        # src/DurableTask.AzureStorage/Tracking/AzureTableTrackingStore.cs
        # (PurgeInstanceHistoryAsync with filters): only the terminal statuses of the
        # filter count, and a filter left with none purges every status, running ones too.
        query = request.query_params
        check_task_hub(query, ctx.taskhub.name)
        created_from = get_time(query, "createdTimeFrom")
        if created_from is None:
            return JSONResponse("Please provide value for 'createdTimeFrom' parameter.",
                                status_code=400)
        created_to = get_time(query, "createdTimeTo") or ctx.taskhub.clock.now()
        given = get_statuses(query) or []
        statuses = [s for s in given if s in TERMINAL_STATUSES] or None
        ids = await ctx.call(_matching_ids, ctx, statuses, created_from, created_to)
        deleted, running = 0, []
        for instance_id, status in ids:
            gone = await ctx.call(ctx.taskhub.purge, instance_id, only_terminal=False)
            deleted += gone
            if gone and status not in TERMINAL_STATUSES:
                running.append(instance_id)
        if running:
            log.warning("purge by filter deleted %d instance(s) that had not ended (%s%s): "
                        "on Azure Storage a purge whose runtimeStatus filter names no ended "
                        "status (Completed, Failed, Terminated, Canceled) purges every "
                        "status, as here", len(running), ", ".join(running[:5]),
                        ", ..." if len(running) > 5 else "")
        if deleted == 0:
            return Response(status_code=404)
        return JSONResponse({"instancesDeleted": deleted})

    base = WEBHOOK_PATH + "/instances"
    return [
        Route(base, list_instances, methods=["GET"]),
        Route(base + "/", list_instances, methods=["GET"]),
        Route(base, purge_many, methods=["DELETE"]),
        Route(base + "/", purge_many, methods=["DELETE"]),
    ]


def _matching_ids(ctx: ApiContext, statuses: list[str] | None, created_from: datetime,
                  created_to: datetime) -> list[tuple[str, str]]:
    ids: list[tuple[str, str]] = []
    token = None
    while True:
        page, token = ctx.taskhub.query(statuses=statuses, created_from=created_from,
                                        created_to=created_to, top=MAX_PAGE_SIZE,
                                        continuation=token)
        ids += [(r.instance_id, r.runtime_status) for r in page
                if not r.instance_id.startswith("@")]
        if token is None:
            return ids
