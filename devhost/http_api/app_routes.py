"""The app's HTTP functions under ``/api/{route}``, as ``func start`` mounts them.

An ASP.NET template (function name if empty; all ``methods`` if absent) becomes Starlette
paths: ``{*rest}`` a path, trailing ``{id?}``/``{id=1}`` and ``{*rest}`` a variant without the
segment, and constraints (``int`` ... ``decimal``) checked before the call (404 otherwise).
Route values stay strings, as in ``HttpRequest.route_params``. Paths match as the Functions host's
ASP.NET Core ``Route`` matches them (:class:`FunctionRoute`): ignoring case, one trailing
slash ignored, only the declared methods.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound, Route
from starlette.types import Receive, Scope, Send

log = logging.getLogger(__name__)

InvokeHttp = Callable[[Any, Request], Awaitable[Response]]

ROUTE_PREFIX = "api"
"""Default ``extensions.http.routePrefix`` of host.json."""

CONSTRAINTS = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "bool": r"(?i:true|false)",
    "alpha": r"[A-Za-z]+",
    "guid": r"\{?[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
            r"[0-9a-fA-F]{12}\}?",
    "float": r"-?\d+(?:\.\d+)?",
    "double": r"-?\d+(?:\.\d+)?",
    "decimal": r"-?\d+(?:\.\d+)?",
}
"""Route constraints checked locally, as regular expressions on the whole value."""

_PARAM = re.compile(r"\{([^{}]+)\}")


@dataclass
class RouteVariant:
    """One Starlette path of a template; ``rank``: literal < constrained < plain < catch-all."""

    path: str
    constraints: dict[str, re.Pattern[str]] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)
    rank: tuple[int, ...] = ()


def _parse_param(body: str, template: str) -> tuple[str, str | None, bool, str | None, bool]:
    catch_all = body.startswith("*")
    body = body.lstrip("*")
    default = None
    if "=" in body:
        body, default = body.split("=", 1)
    optional = body.endswith("?")
    body = body.rstrip("?")
    name, _, constraint = body.partition(":")
    if not name.isidentifier():
        raise ValueError(f"route: parameter {name!r} in {template!r} is not a valid name")
    return name, constraint or None, optional or default is not None, default, catch_all


def translate_route(template: str, prefix: str = ROUTE_PREFIX) -> list[RouteVariant]:
    """Translate a route template into variants: the full path, then one per optional left out.

    Raises ValueError for a parameter name that is not an identifier, or an optional parameter
    not alone in a trailing segment.
    """
    segments = [s for s in template.strip("/").split("/") if s]
    head = f"/{prefix.strip('/')}" if prefix.strip("/") else ""
    parts: list[str] = []
    ranks: list[int] = []
    constraints: dict[str, re.Pattern[str]] = {}
    optional_from: list[tuple[int, str, str | None]] = []
    for index, segment in enumerate(segments):
        rank = 0
        out = segment
        for match in _PARAM.finditer(segment):
            name, constraint, optional, default, catch_all = _parse_param(match.group(1),
                                                                          template)
            # A catch-all matches the empty rest too (ASP.NET Core ``RoutePatternMatcher``),
            # so it leaves a variant without its segment, as an optional parameter does.
            optional = optional or catch_all
            if optional and match.group(0) != segment:
                raise ValueError(f"route: optional or catch-all parameter {name!r} in "
                                 f"{template!r} must be alone in its segment")
            if constraint:
                pattern = CONSTRAINTS.get(constraint.split(":")[0].split("(")[0].lower())
                if pattern is None:
                    log.warning("route %r: constraint %r of %r is not enforced locally",
                                template, constraint, name)
                else:
                    constraints[name] = re.compile(pattern)
            rank = max(rank, 3 if catch_all else 1 if constraint else 2)
            out = out.replace(match.group(0), f"{{{name}:path}}" if catch_all else f"{{{name}}}")
            if optional:
                optional_from.append((index, name, default))
        parts.append(out)
        ranks.append(rank)
    variants = [RouteVariant(head + "/" + "/".join(parts), dict(constraints), {}, tuple(ranks))]
    defaults: dict[str, str] = {}
    for index, name, default in reversed(optional_from):
        if index != len(parts) - 1:
            raise ValueError(f"route: optional or catch-all parameter {name!r} in {template!r} "
                             "must be in a trailing segment")
        parts, ranks = parts[:-1], ranks[:-1]
        if default is not None:
            defaults[name] = default
        variants.append(RouteVariant(head + "/" + "/".join(parts), dict(constraints),
                                     dict(defaults), tuple(ranks)))
    return variants


ALL_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")


def trigger_methods(trigger: dict[str, Any]) -> list[str]:
    """Return the HTTP methods of an ``httpTrigger`` binding, upper case (all if unset)."""
    methods = trigger.get("methods") or ALL_METHODS
    return [str(getattr(m, "value", m)).upper() for m in methods]


class FunctionRoute(Route):
    """A Starlette route matching a path as the Functions host's ASP.NET Core ``Route`` does.

    The host (v4.1036.3 ``WebScriptHostHttpRoutesManager``) maps each function with
    WebJobs.Extensions.Http 3.2.0 ``WebJobsRouteBuilder.MapFunctionRoute``, an ASP.NET Core 8
    ``Route`` whose ``RoutePatternMatcher`` compares literals ``OrdinalIgnoreCase`` and whose
    ``PathTokenizer`` ignores one trailing slash, so ``/api/GETONLY/`` is the function of
    route ``getonly`` (no redirect). Its ``HttpMethodRouteConstraint`` allows exactly the
    declared methods: HEAD is not implied by GET, unlike Starlette's default (a method not
    allowed is 404, azure-functions-host #10098).

    Parameters
    ----------
    path : str
        The Starlette path of one :class:`RouteVariant`.
    endpoint : Callable[[Request], Awaitable[Response]]
        The function's endpoint.
    methods : list[str]
        The declared methods, upper case.
    name : str
        The route's name.
    """

    def __init__(self, path: str, endpoint: Callable[[Request], Awaitable[Response]], *,
                 methods: list[str], name: str) -> None:
        super().__init__(path, endpoint, methods=methods, name=name)
        self.methods = set(methods)
        pattern = self.path_regex.pattern
        if not pattern.endswith("/$"):
            pattern = pattern[:-1] + "/?$"
        self.path_regex = re.compile(pattern, re.IGNORECASE)


class UnmatchedFunctionPath(BaseRoute):
    """The last route: a path under the route prefix no function took is 404, never redirected.

    Starlette's ``redirect_slashes`` answers 307 for ``/api/echo//`` (its twin ``/api/echo/``
    matches); the host's ASP.NET Core routing finds no route for an empty segment and answers
    404. A partial match, so a function route refusing the method still answers first.

    Parameters
    ----------
    prefix : str
        host.json's ``extensions.http.routePrefix`` (empty: every path).
    excluded : str
        A path (the Durable HTTP API's) left to the other routes' own answers.
    """

    def __init__(self, prefix: str, excluded: str) -> None:
        head = prefix.strip("/")
        self.head = f"/{head.lower()}" if head else ""
        self.excluded = excluded

    def _covers(self, path: str) -> bool:
        if path == self.excluded or path.startswith(self.excluded + "/"):
            return False
        lower = path.lower()
        return not self.head or lower == self.head or lower.startswith(self.head + "/")

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """Match partially every HTTP path under the prefix, outside ``excluded``."""
        if scope["type"] == "http" and self._covers(scope["path"]):
            return Match.PARTIAL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        """Name no URL; raises ``NoMatchFound``."""
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Raise the 404 the app's error handler answers."""
        raise HTTPException(status_code=404)


def http_trigger_routes(functions: Iterable[Any], invoke_http: InvokeHttp,
                        prefix: str = ROUTE_PREFIX) -> list[FunctionRoute]:
    """Build the app's HTTP function routes, literal first; ValueError as ``translate_route``."""
    entries: list[tuple[tuple[int, ...], int, RouteVariant, Any]] = []
    for fdef in functions:
        template = fdef.trigger.get("route") or fdef.name
        for variant in translate_route(template, prefix):
            entries.append((variant.rank, len(entries), variant, fdef))
    entries.sort(key=lambda e: (e[0], e[1]))
    return [FunctionRoute(v.path, _endpoint(fdef, v, invoke_http),
                          methods=trigger_methods(fdef.trigger), name=f"{fdef.name}:{v.path}")
            for _, _, v, fdef in entries]


def _endpoint(fdef: Any, variant: RouteVariant,
              invoke_http: InvokeHttp) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        values = {k: str(v) for k, v in request.path_params.items()}
        for name, pattern in variant.constraints.items():
            if name in values and not pattern.fullmatch(values[name]):
                return Response(status_code=404)
        request.scope["path_params"] = {**variant.defaults, **values}
        return await invoke_http(fdef, request)
    return endpoint
