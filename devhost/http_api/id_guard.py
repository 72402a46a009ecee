"""Malformed instance ids and unknown routes of the Durable HTTP API get a JSON reason.

Routing sees the *decoded* path, so an id with an encoded slash (``instances/a%2Fb``) used
to be split in two and answered with a text 405 or 404, or worse, routed as another
request (``instances/a%2Fterminate`` as "terminate instance a"). :class:`InstanceIdGuard`
reads the id from the raw path first and answers an id that breaks the rules of SPEC D2
(:func:`~azurekit.instance_ids.validate_instance_id`) with HTTP 400 and the rule,
before any route runs. Ids starting with ``@`` are entity ids: they go on to the routes,
which answer 404 with a reason when no such instance exists. :func:`route_error` turns
Starlette's own 404/405 under the webhook path into the API's JSON error form.
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
    """Return why ``value`` can never name an instance (SPEC D2), or None if it may.

    A leading ``@`` alone is no reason: entity ids start with it.

    Parameters
    ----------
    value : str
        The decoded instance id from the URL.

    Returns
    -------
    str or None
        The rule broken, starting with ``instanceId:``.
    """
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
    """Return the D2 rule broken by the instance id in a request's raw path, if any.

    Parameters
    ----------
    scope : dict
        The ASGI HTTP scope (``raw_path`` keeps ``%2F`` encoded, unlike ``path``).

    Returns
    -------
    str or None
        None for paths outside ``/runtime/webhooks/durabletask/instances/{id}...`` (the
        list route with a trailing slash included) and for acceptable ids.
    """
    raw = scope.get("raw_path") or scope.get("path", "").encode()
    path = raw.decode("ascii", errors="replace") if isinstance(raw, bytes) else str(raw)
    if not path.startswith(INSTANCES_PREFIX) or path == INSTANCES_PREFIX:
        return None
    segment = path[len(INSTANCES_PREFIX):].split("/", 1)[0]
    return instance_id_problem(unquote(segment))


class InstanceIdGuard:
    """ASGI middleware: refuse requests whose instance id is malformed with a JSON 400.

    Parameters
    ----------
    app : ASGI application
        The Durable HTTP API (and the app's HTTP triggers, passed through untouched).
    """

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
    """Answer Starlette's 404/405 under the webhook path in the API's JSON error form.

    Other paths (the app's ``/api/`` routes) keep the plain answer, as the Functions host
    gives for an unknown function route.
    """
    if not isinstance(exc, HTTPException):
        raise exc
    path = request.url.path
    if not path.startswith(WEBHOOK_PATH + "/") and path != WEBHOOK_PATH:
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
