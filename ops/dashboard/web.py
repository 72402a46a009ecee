"""HTTP plumbing of the dashboard: strict query parameters, problems as 4xx, safe headers.

Every answer the dashboard gives goes through here: JSON with ``Cache-Control: no-store``,
static files with a Content-Security-Policy that allows only the app's own scripts and
styles (no inline script, nothing from elsewhere, no framing), and refusals as
``{"error": <reason>}`` with a 4xx status. Query parameters are checked against what each
endpoint takes: an unknown or malformed one is refused (400) instead of ignored. ``code``
is always allowed: it is how Azure takes the function key in a URL.

Operator actions name their operator. Azure App Service authentication (Easy Auth) puts
the signed-in user in ``X-MS-CLIENT-PRINCIPAL-NAME``, which the platform strips from
incoming requests and sets itself, but only where it is turned on (App Service sets
``WEBSITE_AUTH_ENABLED`` to ``True`` then); so that header is used only there, and
anywhere else a caller could write any name in it. Otherwise the page sends the name the
operator typed in ``X-Ops-Operator``. A request with neither is refused with
403: a plain HTML form or a cross-site page cannot set such a header without a CORS
preflight the app never grants, so an action cannot be forged from another site.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import azure.functions as func

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Headers of every dashboard answer."""

ALWAYS_ALLOWED = frozenset({"code"})
"""Query parameters every endpoint accepts (``code``: the function key in Azure)."""

PRINCIPAL_HEADER = "x-ms-client-principal-name"
CLAIMS_HEADER = "x-ms-client-principal"
"""Easy Auth's base64-encoded JSON of the signed-in principal's claims (roles among them)."""
DETAILS_ROLE = "Orders.Details"
"""App role a signed-in operator needs on Azure to see classified data (SPEC X10)."""
OPERATOR_HEADER = "x-ops-operator"
_OPERATOR = re.compile(r"^[\w.@ -]{1,80}$")
MAX_BODY_BYTES = 16 * 1024
"""Largest request body an action takes: its fields need a few hundred bytes."""


class Problem(Exception):
    """A request the dashboard refuses: answered with ``status`` and ``{"error": reason}``.

    Parameters
    ----------
    status : int
        A 4xx status.
    reason : str
        One sentence saying what is wrong and how to ask instead.
    """

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def respond(body: str | bytes, mimetype: str, status: int = 200) -> func.HttpResponse:
    """Return an answer with the dashboard's security headers."""
    return func.HttpResponse(body, status_code=status, mimetype=mimetype,
                             headers=dict(SECURITY_HEADERS))


def json_response(data: Any, status: int = 200) -> func.HttpResponse:
    """Return ``data`` as JSON with the dashboard's headers."""
    return respond(json.dumps(data), "application/json", status)


def problem_response(problem: Problem) -> func.HttpResponse:
    """Return a refusal as ``{"error": reason}`` with its status."""
    return json_response({"error": problem.reason}, problem.status)


def query(req: func.HttpRequest,
          parsers: Mapping[str, Callable[[str], Any]]) -> dict[str, Any]:
    """Return the request's query parameters, each parsed by its parser.

    Parameters
    ----------
    req : func.HttpRequest
        The request.
    parsers : mapping
        Parameter name -> parser (raises ``ValueError`` with the rule on a bad value).
        Parameters absent from the request are absent from the result.

    Raises
    ------
    Problem
        400 naming an unknown parameter or a value its parser refused.
    """
    parsed: dict[str, Any] = {}
    for name, value in req.params.items():
        if name in ALWAYS_ALLOWED:
            continue
        if name not in parsers:
            known = ", ".join(sorted(parsers)) or "none"
            raise Problem(400, f"unknown query parameter {name!r} (this endpoint takes: "
                               f"{known})")
        try:
            parsed[name] = parsers[name](value)
        except ValueError as exc:
            raise Problem(400, f"query parameter {name!r}: {exc}") from None
    return parsed


def int_from(low: int, high: int) -> Callable[[str], int]:
    """Return a parser of a decimal integer from ``low`` to ``high``."""
    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]{1,7}", text) or not low <= int(text) <= high:
            raise ValueError(f"must be an integer from {low} to {high}; got {text[:40]!r}")
        return int(text)
    return parse


def text_up_to(limit: int) -> Callable[[str], str]:
    """Return a parser of a non-empty text of at most ``limit`` characters."""
    def parse(text: str) -> str:
        if not 1 <= len(text) <= limit:
            raise ValueError(f"must be 1 to {limit} characters; got {len(text)}")
        return text
    return parse


def json_body(req: func.HttpRequest) -> dict[str, Any]:
    """Return the request's body as a JSON object.

    Raises
    ------
    Problem
        415 if the body is not declared JSON, 413 if it is longer than
        :data:`MAX_BODY_BYTES`, 400 if it is not a JSON object (nesting too deep for the
        parser included).
    """
    if not req.headers.get("content-type", "").lower().startswith("application/json"):
        raise Problem(415, "send the body as JSON (Content-Type: application/json)")
    raw = req.get_body() or b"null"
    if len(raw) > MAX_BODY_BYTES:
        raise Problem(413, f"the body is longer than {MAX_BODY_BYTES} bytes")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise Problem(400, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise Problem(400, "the body must be a JSON object")
    return body


def boolean(text: str) -> bool:
    """Parse ``true``/``false`` (any case) as a query parameter; raise ValueError otherwise."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"must be true or false; got {text[:20]!r}")
    return value == "true"


def roles_of(req: func.HttpRequest) -> set[str]:
    """Return the app roles in Easy Auth's ``X-MS-CLIENT-PRINCIPAL`` claims (empty if none).

    The platform sets the header (and strips a caller's) only where App Service
    authentication is on; read it only then (``WEBSITE_AUTH_ENABLED``).
    """
    raw = req.headers.get(CLAIMS_HEADER)
    if not raw:
        return set()
    try:
        claims = json.loads(base64.b64decode(raw, validate=True)).get("claims") or []
    except (ValueError, AttributeError, binascii.Error):
        return set()
    return {str(c.get("val")) for c in claims
            if isinstance(c, dict) and c.get("typ") in ("roles", ROLE_CLAIM)}


ROLE_CLAIM = "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"
"""The long form of the role claim type Entra ID may send instead of ``roles``."""


def check_details(req: func.HttpRequest, asked: bool, easy_auth: bool) -> bool:
    """Decide whether a view may show classified data (SPEC S9, X10).

    Only when asked for (``details=true``), and on Azure (``easy_auth``) only for a
    signed-in principal holding :data:`DETAILS_ROLE`; locally asking is enough.

    Raises
    ------
    Problem
        403 if details were asked for without the role.
    """
    if not asked:
        return False
    if easy_auth and DETAILS_ROLE not in roles_of(req):
        raise Problem(403, f"details=true shows classified customer and payment data: it "
                           f"needs the app role {DETAILS_ROLE!r}")
    return True


def operator_of(req: func.HttpRequest, easy_auth: bool) -> str:
    """Return who performs an action (see the module docstring).

    Parameters
    ----------
    req : azure.functions.HttpRequest
        The action's request.
    easy_auth : bool
        ``WEBSITE_AUTH_ENABLED``: App Service authentication fronts the app, so
        ``X-MS-CLIENT-PRINCIPAL-NAME`` is the platform's and is taken first.

    Raises
    ------
    Problem
        403 if the request names no operator, 400 if the name is not 1-80 letters,
        digits, spaces or ``.@_-``.
    """
    signed_in = req.headers.get(PRINCIPAL_HEADER) if easy_auth else None
    name: str | None = signed_in or req.headers.get(OPERATOR_HEADER)
    if not name:
        raise Problem(403, "operator actions need the operator's name in the X-Ops-Operator "
                           "header (the dashboard sends it; a form or cross-site request "
                           "cannot)")
    if not _OPERATOR.fullmatch(name):
        raise Problem(400, "operator name: 1 to 80 letters, digits, spaces or . @ _ -")
    return name
