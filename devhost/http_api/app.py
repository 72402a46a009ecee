"""One Starlette app: the webhook API (the SDK's ``rpcBaseUrl``) and ``/api/`` functions."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from devhost.app.backends import Backend
from devhost.http_api.admin_routes import admin_routes
from devhost.http_api.app_routes import (
    ROUTE_PREFIX,
    InvokeHttp,
    UnmatchedFunctionPath,
    http_trigger_routes,
)
from devhost.http_api.context import ApiContext
from devhost.http_api.entity_routes import entity_routes
from devhost.http_api.errors import BadRequest, handle_error
from devhost.http_api.id_guard import InstanceIdGuard, route_error
from devhost.http_api.instance_routes import instance_routes
from devhost.http_api.origin_guard import OriginGuard
from devhost.http_api.query_routes import query_routes
from devhost.http_api.start_routes import start_routes
from devhost.http_api.urls import WEBHOOK_PATH, check_base_url
from devhost.taskhub.store import TaskHub, TaskHubError


def create_http_app(taskhub: TaskHub, *, base_url: str, http_functions: Iterable[Any] = (),
                    invoke_http: InvokeHttp | None = None,
                    on_instance_work: Callable[[str], None] | None = None,
                    orchestrator_names: Collection[str] | None = None,
                    entity_names: Collection[str] | None = None,
                    replace_running: bool = False,
                    host_state: Callable[[], str] = lambda: "Running",
                    backend: Backend | None = None,
                    route_prefix: str = ROUTE_PREFIX) -> Starlette:
    """Build the host's ASGI app; management URLs use ``base_url`` (absolute http(s)).

    ``invoke_http`` (``async (function_def, request) -> Response``) is required with
    ``http_functions``; ``on_instance_work(id)`` runs on the event loop after a change that
    gives an instance work (a start, restart, rewind, event, terminate, suspend, resume, entity
    signal) and must not block; ``orchestrator_names``/``entity_names`` (None: any) refuse
    others with 400; ``replace_running`` is ``overridableExistingInstanceStates: AnyState``
    (else 500); ``route_prefix`` is host.json's ``extensions.http.routePrefix``. Raises
    ValueError for a bad ``base_url``, a missing ``invoke_http`` or a malformed route.
    ``backend`` (default Azure Storage) refuses an input or event over its payload limit
    with 400 (:mod:`devhost.app.backends`).
    """
    base_url = check_base_url(base_url)
    functions = list(http_functions)
    if functions and invoke_http is None:
        raise ValueError("invoke_http: required when http_functions is not empty")
    ctx = ApiContext(taskhub, base_url, orchestrator_names, on_instance_work,
                     replace_running, backend or Backend())
    routes: list[BaseRoute] = [*start_routes(ctx), *query_routes(ctx), *instance_routes(ctx),
                               *entity_routes(ctx, entity_names), *admin_routes(host_state)]
    if functions and invoke_http is not None:  # not None whenever there are functions
        routes += [*http_trigger_routes(functions, invoke_http, route_prefix),
                   UnmatchedFunctionPath(route_prefix, WEBHOOK_PATH)]
    # A request not addressed to the host, or a cross-site change, is refused (403);
    # a malformed instance id (400, JSON) before routing; unknown webhook routes answer
    # JSON 404/405 with a reason.
    return Starlette(routes=routes, middleware=[Middleware(OriginGuard, base_url=base_url),
                                                Middleware(InstanceIdGuard)],
                     exception_handlers={BadRequest: handle_error, TaskHubError: handle_error,
                                         404: route_error, 405: route_error})
