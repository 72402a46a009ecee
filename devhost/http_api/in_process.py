"""The Durable HTTP API answered inside the process, for the host's own durable clients.

An app's ``DurableOrchestrationClient`` (azure-functions-durable 1.x) takes its three request
functions, ``post_async_request``, ``get_async_request`` and ``delete_async_request``, from
its module when it is constructed, and sends every call to ``rpcBaseUrl`` or to the
management URLs of the ``durableClient`` binding: the host's own base URL. On Azure that
is a loopback HTTP call into the Functions host; here the host puts answering functions in
that module (:func:`install_sdk_requests`), so a URL under a registered host's webhook base
(:func:`register`) is answered by that host's route handlers themselves, with no socket,
server thread or HTTP parsing: the same ``Route`` objects, the same guards (origin and
malformed instance id, :mod:`.origin_guard`, :mod:`.id_guard`) and the same error handlers
as the served app, so the same status codes, headers and bodies. A request no route takes
in full (404, 405) goes through the app itself. Any other URL goes over HTTP as before;
the API stays served for outside callers.

The SDK's functions return ``[status, body]`` with the body read as aiohttp's
``response.json(content_type=None)`` reads it (empty: ``None``; ``get``: ``""``), and
send ``json=data`` (no body when ``data`` is None); these do exactly that.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Match, Route
from yarl import URL

from devhost.http_api.errors import error_response
from devhost.http_api.id_guard import malformed_instance_id
from devhost.http_api.origin_guard import own_authorities, refusal
from devhost.http_api.urls import WEBHOOK_PATH, webhook_base

log = logging.getLogger("devhost.http")

SDK_CLIENT_MODULE = "azure.durable_functions.models.DurableOrchestrationClient"
"""The SDK module whose request functions a new ``DurableOrchestrationClient`` takes."""

_REQUEST_FUNCTIONS = ("post_async_request", "get_async_request", "delete_async_request")


@dataclass(frozen=True)
class Answer:
    """One API answer: HTTP status, headers (lower-case names) and body bytes."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def json(self) -> Any:
        """Return the body as aiohttp's ``json(content_type=None)`` does: empty is None."""
        stripped = self.body.strip()
        return json.loads(stripped.decode("utf-8")) if stripped else None


def _answer(response: Response) -> Answer:
    return Answer(response.status_code,
                  [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers],
                  bytes(response.body))


class InProcessApi:
    """Answer Durable HTTP API requests with an API app's route handlers, without HTTP.

    The app is one :func:`devhost.http_api.create_http_app` built.

    Parameters
    ----------
    app : Starlette
        The host's API app; its webhook routes, in order, and its exception handlers answer.
    base_url : str
        The host's base URL (absolute http(s)); requests under its webhook base are answered.
    """

    def __init__(self, app: Starlette, base_url: str) -> None:
        self.app = app
        self.webhook_base = webhook_base(base_url)
        self._own = own_authorities(base_url)
        self._routes = [r for r in app.routes
                        if isinstance(r, Route) and r.path.startswith(WEBHOOK_PATH)]

    def serves(self, url: str) -> bool:
        """Return whether ``url`` is under this host's webhook base."""
        base = self.webhook_base
        return url.startswith(base) and (len(url) == len(base) or url[len(base)] in "/?")

    async def request(self, method: str, raw_path: str, query: str,
                      headers: list[tuple[str, str]], body: bytes = b"") -> Answer:
        """Answer one request as the served app would (``raw_path`` percent-encoded).

        ``headers`` are what the client sends (``host`` among them). Errors the app's
        handlers do not answer are logged and answered 500 ``Internal Server Error``, as
        Starlette's server-error middleware answers them.
        """
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method.upper(), "scheme": "http", "root_path": "",
            "path": unquote(raw_path), "raw_path": raw_path.encode("ascii"),
            "query_string": query.encode("ascii"),
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1"))
                        for k, v in headers],
            "server": None, "client": None, "app": self.app,
        }
        reason = refusal(scope, self._own)
        if reason is not None:
            return _answer(error_response(403, reason))
        reason = malformed_instance_id(scope)
        if reason is not None:
            return _answer(error_response(400, reason))
        route = self._match(scope)
        if route is None:  # 404 or 405 (or a slash redirect): as the app answers them
            return await self._through_app(scope, body)
        return await self._call(route, scope, body)

    def _match(self, scope: dict[str, Any]) -> Route | None:
        for route in self._routes:
            match, child = route.matches(scope)
            if match is Match.FULL:
                scope.update(child)
                return route
        return None

    async def _call(self, route: Route, scope: dict[str, Any], body: bytes) -> Answer:
        request = Request(scope, _receiver(body))
        try:
            response = await route.endpoint(request)
        except Exception as exc:  # noqa: BLE001 - answered as the app answers it
            handler = self._handler(exc)
            if handler is None:
                log.error("Exception in ASGI application", exc_info=exc)
                return _answer(PlainTextResponse("Internal Server Error", status_code=500))
            response = await handler(request, exc)
        return _answer(response)

    def _handler(self, exc: Exception) -> Callable[[Request, Exception],
                                                    Awaitable[Response]] | None:
        handlers = self.app.exception_handlers
        if isinstance(exc, HTTPException) and exc.status_code in handlers:
            return handlers[exc.status_code]
        return next((handlers[cls] for cls in type(exc).__mro__ if cls in handlers), None)

    async def _through_app(self, scope: dict[str, Any], body: bytes) -> Answer:
        status, headers, chunks = 500, [], []

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(k.decode("latin-1"), v.decode("latin-1"))
                           for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        scope = {k: v for k, v in scope.items() if k not in ("app", "endpoint", "path_params")}
        await self.app(scope, _receiver(body), send)
        return Answer(status, headers, b"".join(chunks))


def _receiver(body: bytes) -> Callable[[], Awaitable[MutableMapping[str, Any]]]:
    sent = False

    async def receive() -> MutableMapping[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


# ---------------------------------------------------------------------------- the SDK's client
_apis: dict[str, InProcessApi] = {}
_guard = threading.Lock()
_originals: dict[str, Any] = {}


def register(api: InProcessApi) -> None:
    """Answer the SDK client's requests under ``api``'s webhook base in this process."""
    install_sdk_requests()
    with _guard:
        _apis[api.webhook_base] = api


def unregister(api: InProcessApi) -> None:
    """Stop answering for ``api`` (another registered for the same base stays)."""
    with _guard:
        if _apis.get(api.webhook_base) is api:
            del _apis[api.webhook_base]


def api_for(url: str) -> InProcessApi | None:
    """Return the registered API serving ``url``, or None (it goes over HTTP)."""
    with _guard:
        apis = list(_apis.values())
    return next((a for a in apis if a.serves(url)), None)


async def _send(api: InProcessApi, method: str, url: str, data: Any,
                extra: dict[str, str | None]) -> Answer:
    # What aiohttp puts on the wire for session.<method>(url, json=data, headers=...).
    target = URL(url)
    headers = [("host", urlsplit(url).netloc), ("accept", "*/*")]
    body = b""
    if data is not None:
        body = json.dumps(data).encode("utf-8")
        headers += [("content-type", "application/json"), ("content-length", str(len(body)))]
    headers += [(k, v) for k, v in extra.items() if v]
    return await api.request(method, target.raw_path, target.raw_query_string, headers, body)


async def post_async_request(url: str, data: Any = None, trace_parent: str | None = None,
                             trace_state: str | None = None,
                             function_invocation_id: str | None = None) -> list[Any]:
    """Post as the SDK's ``post_async_request``; a registered host answers in this process."""
    api = api_for(url)
    if api is None:
        return await _originals["post_async_request"](url, data, trace_parent, trace_state,
                                                      function_invocation_id)
    answer = await _send(api, "POST", url, data, {
        "traceparent": trace_parent, "tracestate": trace_state,
        "x-azure-functions-invocationid": function_invocation_id})
    return [answer.status, answer.json()]


async def get_async_request(url: str, function_invocation_id: str | None = None) -> list[Any]:
    """Get as the SDK's ``get_async_request`` (an empty body is ``""``), answered likewise."""
    api = api_for(url)
    if api is None:
        return await _originals["get_async_request"](url, function_invocation_id)
    answer = await _send(api, "GET", url, None,
                         {"x-azure-functions-invocationid": function_invocation_id})
    data = answer.json()
    return [answer.status, "" if data is None else data]


async def delete_async_request(url: str,
                               function_invocation_id: str | None = None) -> list[Any]:
    """Delete as the SDK's ``delete_async_request``, answered likewise."""
    api = api_for(url)
    if api is None:
        return await _originals["delete_async_request"](url, function_invocation_id)
    answer = await _send(api, "DELETE", url, None,
                         {"x-azure-functions-invocationid": function_invocation_id})
    return [answer.status, answer.json()]


def install_sdk_requests() -> bool:
    """Put this module's request functions in the SDK's client module (idempotent).

    Clients constructed from then on use them. False, with nothing changed, for an SDK
    without those module-level functions (its clients then call over HTTP).
    """
    try:
        module = importlib.import_module(SDK_CLIENT_MODULE)
    except ImportError:
        return False
    mine = {"post_async_request": post_async_request, "get_async_request": get_async_request,
            "delete_async_request": delete_async_request}
    with _guard:
        for name in _REQUEST_FUNCTIONS:
            current = getattr(module, name, None)
            if current is None:
                return False
            if current is not mine[name]:
                _originals[name] = current
                setattr(module, name, mine[name])
    return True
