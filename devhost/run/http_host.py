"""The host's HTTP side: Durable HTTP API plus the app's HTTP triggers under ``api/``.

An app HTTP function is invoked as the Python worker would: with an
``azure.functions.HttpRequest`` (method, url, headers, query, route params, body) and, if it
declares one, the durable client binding; its return value becomes the HTTP answer as the
worker and the Functions host convert it (:mod:`devhost.app.http_convert`).
The function runs in a worker thread so that a durable client inside it can call back
into this same server.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import anyio
import azure.functions as func
from starlette.requests import Request
from starlette.responses import Response

from devhost.app import invoke
from devhost.app.executions import log_failed
from devhost.app.http_convert import http_answer, request_headers, request_params
from devhost.app.loader import FunctionDef
from devhost.http_api import create_http_app


class HttpHost(Protocol):
    """What the HTTP side needs of its host (:class:`devhost.run.host.LocalHost` is one)."""

    @property
    def taskhub(self) -> Any: ...  # noqa: D102

    @property
    def base_url(self) -> str: ...  # noqa: D102

    @property
    def index(self) -> Any: ...  # noqa: D102

    @property
    def config(self) -> Any: ...  # noqa: D102

    @property
    def state(self) -> str: ...  # noqa: D102

    @property
    def backend(self) -> Any: ...  # noqa: D102

    def client_binding(self) -> Any: ...  # noqa: D102

    def wake(self) -> None: ...  # noqa: D102


class OutputBinding:
    """A ``func.Out`` for a named output binding of a v1 function (the worker's ``Out``)."""

    def __init__(self) -> None:
        self._value: Any = None

    def set(self, val: Any) -> None:
        """Set the binding's value."""
        self._value = val

    def get(self) -> Any:
        """Return the value set (None if never set)."""
        return self._value


def build_http_app(host: HttpHost, *, with_functions: bool = True) -> Any:
    """Build the ASGI app served by :meth:`LocalHost.start_http`.

    ``with_functions`` False leaves the app's HTTP functions out: the Durable HTTP API alone,
    as a worker process answers its own durable clients (:mod:`devhost.http_api.in_process`).
    """

    async def invoke_http(fdef: FunctionDef, request: Request) -> Response:
        body = await request.body()
        req = func.HttpRequest(method=request.method, url=str(request.url),
                               headers=request_headers(request),
                               params=request_params(request),
                               route_params=dict(request.path_params), body=body)
        kwargs: dict[str, Any] = {fdef.trigger_param: req}
        if fdef.client_param:
            kwargs[fdef.client_param] = host.client_binding()
        out = OutputBinding() if fdef.output_param else None
        if fdef.output_param:
            kwargs[fdef.output_param] = out
        started_s = time.monotonic()
        try:
            result = await anyio.to_thread.run_sync(invoke.call, fdef.func, kwargs)
        except Exception as exc:  # noqa: BLE001 - the function failed: the host answers 500
            log_failed(fdef.name, started_s, exc)  # one line, as Core Tools prints it
            return Response(status_code=500)
        if out is not None:  # a v1 output binding other than $return: no return value
            result = out.get()
            if result is None:
                return Response(status_code=204)
        return http_answer(result, fdef.name)

    return create_http_app(host.taskhub, base_url=host.base_url,
                           http_functions=host.index.http if with_functions else (),
                           invoke_http=invoke_http,
                           on_instance_work=lambda _id: host.wake(),
                           orchestrator_names=list(host.index.orchestrators),
                           entity_names=list(host.index.entities),
                           replace_running=host.config.durable.overridable_states == "AnyState",
                           route_prefix=host.config.route_prefix,
                           host_state=lambda: host.state, backend=host.backend)
