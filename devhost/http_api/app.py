"""The local host's HTTP application: the Durable HTTP API plus the app's HTTP triggers.

One Starlette app serves, on 127.0.0.1, what the Functions host and the Durable extension
serve in Azure: the documented webhook API under ``/runtime/webhooks/durabletask/`` (which
is also the ``rpcBaseUrl`` the Python SDK's durable client calls), including the entity
routes, and the app's HTTP functions under ``/api/``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware

from devhost.http_api.app_routes import InvokeHttp, http_trigger_routes
from devhost.http_api.context import ApiContext
from devhost.http_api.entity_routes import entity_routes
from devhost.http_api.errors import BadRequest, handle_error
from devhost.http_api.id_guard import InstanceIdGuard, route_error
from devhost.http_api.instance_routes import instance_routes
from devhost.http_api.origin_guard import OriginGuard
from devhost.http_api.query_routes import query_routes
from devhost.http_api.start_routes import start_routes
from devhost.http_api.urls import check_base_url
from devhost.taskhub.store import TaskHub, TaskHubError


def create_http_app(taskhub: TaskHub, *, base_url: str, http_functions: Iterable[Any] = (),
                    invoke_http: InvokeHttp | None = None,
                    on_start_instance: Callable[[str], None] | None = None,
                    orchestrator_names: Collection[str] | None = None,
                    entity_names: Collection[str] | None = None,
                    replace_running: bool = False) -> Starlette:
    """Build the HTTP application of the local host.

    Parameters
    ----------
    taskhub : TaskHub
        The task hub the Durable API reads and writes.
    base_url : str
        Where the app is served, such as ``http://127.0.0.1:7071``; used in the management
        URLs it returns.
    http_functions : iterable
        The app's HTTP-triggered function definitions (``name`` and ``trigger``), mounted
        under ``/api/{route}``.
    invoke_http : callable, optional
        ``async (function_def, request) -> Response`` running one HTTP function; required
        when ``http_functions`` is not empty.
    on_start_instance : callable, optional
        Called with the instance id after an instance is created by start or restart (the
        host wakes its dispatcher with it). It runs on the event loop: it must not block.
    orchestrator_names : collection of str, optional
        The app's orchestrator function names; when given, starting any other name is
        refused with 400 as the extension does. None accepts any name.
    entity_names : collection of str, optional
        The app's entity names (any case); a signal to any other name is refused with 400.
        None accepts any name.
    replace_running : bool
        A start with the id of an instance that has not ended replaces it (host.json
        ``overridableExistingInstanceStates: AnyState``); by default it is refused with
        500 as the extension refuses it.

    Returns
    -------
    Starlette
        The ASGI application (serve it with uvicorn, lifespan off or on).

    Raises
    ------
    ValueError
        If ``base_url`` is not an absolute http(s) URL, ``http_functions`` is given without
        ``invoke_http``, or a route template is malformed.
    """
    base_url = check_base_url(base_url)
    functions = list(http_functions)
    if functions and invoke_http is None:
        raise ValueError("invoke_http: required when http_functions is not empty")
    ctx = ApiContext(taskhub, base_url, orchestrator_names, on_start_instance,
                     replace_running)
    routes = [*start_routes(ctx), *query_routes(ctx), *instance_routes(ctx),
              *entity_routes(ctx, entity_names)]
    if functions and invoke_http is not None:  # not None whenever there are functions
        routes += http_trigger_routes(functions, invoke_http)
    # A request not addressed to the host, or a cross-site change, is refused (403);
    # a malformed instance id (400, JSON) before routing; unknown webhook routes answer
    # JSON 404/405 with a reason.
    return Starlette(routes=routes, middleware=[Middleware(OriginGuard, base_url=base_url),
                                                Middleware(InstanceIdGuard)],
                     exception_handlers={BadRequest: handle_error, TaskHubError: handle_error,
                                         404: route_error, 405: route_error})
