"""HTTP plumbing of the dashboard: strict query parameters, problems as 4xx, safe headers.

Unknown or malformed parameters are refused (400), so no key travels in a URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import azure.functions as func

from ops import access
from orders.models import wire

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

ALWAYS_ALLOWED: frozenset[str] = frozenset()
"""Query parameters every endpoint accepts besides its own: none (no key in a URL)."""

MAX_BODY_BYTES = 16 * 1024
"""Largest request body an action takes: its fields need a few hundred bytes."""


Problem = access.AccessDenied
"""A refusal, answered with ``status`` and ``{"error": reason}`` (:mod:`ops.access`'s class)."""


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
    """Return the request's query parameters present, each parsed by its parser.

    Raises
    ------
    Problem
        400 naming an unknown parameter, one given twice (``req.params`` keeps only one of
        them, so the URL is read) or a value its parser refused; 400 for a query that is not
        percent-encoded UTF-8.
    """
    try:
        pairs = parse_qsl(urlsplit(req.url).query, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise Problem(400, "the query is not percent-encoded UTF-8") from None
    parsed: dict[str, Any] = {}
    for name, value in pairs or req.params.items():
        if name in ALWAYS_ALLOWED:
            continue
        if name in parsed:
            raise Problem(400, f"query parameter {name!r} is given more than once")
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
        :data:`MAX_BODY_BYTES`, 400 if it is not a JSON object (nesting too deep included).
    """
    if not req.headers.get("content-type", "").lower().startswith("application/json"):
        raise Problem(415, "send the body as JSON (Content-Type: application/json)")
    raw = req.get_body() or b"null"
    if len(raw) > MAX_BODY_BYTES:
        raise Problem(413, f"the body is longer than {MAX_BODY_BYTES} bytes")
    try:
        body = wire.loads(raw)
    except wire.InvalidMessage as exc:
        raise Problem(400, f"the body is not valid JSON: {exc.description}") from None
    if not isinstance(body, dict):
        raise Problem(400, "the body must be a JSON object")
    return body


def boolean(text: str) -> bool:
    """Parse ``true``/``false`` (any case) as a query parameter; raise ValueError otherwise."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"must be true or false; got {text[:20]!r}")
    return value == "true"


def check_details(req: func.HttpRequest, asked: bool, settings: Any) -> bool:
    """Decide whether a view may show classified data (:func:`ops.access.may_see_details`)."""
    return access.may_see_details(req.headers, asked, settings)


def operator_of(req: func.HttpRequest, settings: Any) -> str:
    """Return who performs an action (:func:`ops.access.operator_of`; raises :data:`Problem`)."""
    return access.operator_of(req.headers, settings)


def require_caller(req: func.HttpRequest, settings: Any) -> access.Caller:
    """Return the caller of a read (:func:`ops.access.reader_of`; raises :data:`Problem`)."""
    return access.reader_of(req.headers, settings)
