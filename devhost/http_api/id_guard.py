"""Malformed instance ids and unknown routes of the Durable HTTP API get a JSON reason.

Routing sees the decoded path, so ``instances/a%2Fterminate`` would be "terminate a":
:class:`InstanceIdGuard` checks the raw path's id against D2 first (400). ``@`` ids are
entity ids and go on to the routes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from azurekit.instance_ids import validate_instance_id
from devhost.http_api.errors import error_response
from devhost.http_api.urls import WEBHOOK_PATH

INSTANCES_PREFIX = WEBHOOK_PATH + "/instances/"
"""Raw path prefix of every route that takes an instance id in its first segment."""


def instance_id_problem(value: str) -> str | None:
    """Return the D2 rule (``instanceId: ...``) a decoded id breaks, or None; ``@`` may lead."""
    try:
        validate_instance_id(value)
        return None
    except ValueError as exc:
        if not value.startswith("@"):
            return str(exc)
    try:
        validate_instance_id("x" + value[1:])
        return None
    except ValueError as exc:
        return str(exc)


def malformed_instance_id(scope: dict[str, Any]) -> str | None:
    """Return the D2 rule the raw path's instance id breaks; None outside ``instances/{id}``."""
    raw = scope.get("raw_path") or scope.get("path", "").encode()
    path = raw.decode("ascii", errors="replace") if isinstance(raw, bytes) else str(raw)
    if not path.startswith(INSTANCES_PREFIX) or path == INSTANCES_PREFIX:
        return None
    segment = path[len(INSTANCES_PREFIX):].split("/", 1)[0]
    return instance_id_problem(unquote(segment))


class InstanceIdGuard:
    """ASGI middleware: a JSON 400 for a malformed instance id; the rest passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer 400 for a malformed id, else pass the request on."""
        if scope["type"] == "http":
            reason = malformed_instance_id(scope)
            if reason is not None:
                await error_response(400, reason)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def route_error(request: Request, exc: Exception) -> Response:
    """Answer 404/405 under the webhook path as JSON; elsewhere the Functions host's plain one."""
    if not isinstance(exc, HTTPException):
        raise exc
    path = request.url.path
    if not path.startswith(WEBHOOK_PATH + "/") and path != WEBHOOK_PATH:
        if exc.status_code == 405:
            # An app route's method not in its ``methods`` is 404, as the Functions host
            # routes it (azure-functions-host #10098).
            return Response(status_code=404)
        return PlainTextResponse(exc.detail, status_code=exc.status_code,
                                 headers=exc.headers)
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        detail = (f"method: {request.method} is not allowed on {path}; "
                  f"allowed: {allowed or 'none'}")
    else:
        detail = (f"path: no Durable HTTP API route {request.method} {path}; an instance id "
                  "or event name must be one path segment (no '/', even encoded)")
    response = error_response(exc.status_code, detail)
    if exc.headers:
        response.headers.update(exc.headers)
    return response
