"""The local host answers only its own origin (DNS rebinding and cross-site requests).

Like Core Tools it asks for no key, so a browser page could POST ``.../terminate`` as
``text/plain`` (no preflight), and a DNS-rebinding page could read every answer. So ``Host``
must be the base URL's authority or a loopback name with its port, and a change (not GET,
HEAD, OPTIONS) with an ``Origin`` must come from one of those; programs send none. Else 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from devhost.http_api.errors import error_response

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""Names of this machine a browser on it uses for a loopback server."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing (RFC 9110 section 9.2.1)."""


def own_authorities(base_url: str) -> frozenset[str]:
    """Return the ``Host`` values allowed: the base URL's authority (all loopback names too)."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    own = {parts.netloc.lower()}
    host = (parts.hostname or "").lower()
    if host in ("127.0.0.1", "localhost", "::1"):
        own.update(f"{name}:{port}" for name in LOOPBACK_NAMES)
    return frozenset(own)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def refusal(scope: dict[str, Any], own: Iterable[str]) -> str | None:
    """Return why a request is not for this host, or None if it is (module docstring)."""
    allowed = frozenset(own)
    host = (_header(scope, b"host") or "").strip().lower()
    if host not in allowed:
        return (f"Host: {host[:100]!r} is not this host ({', '.join(sorted(allowed))}); "
                "the local host answers only requests addressed to it")
    origin = _header(scope, b"origin")
    if origin is not None and scope.get("method", "GET").upper() not in SAFE_METHODS:
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or parts.netloc.lower() not in allowed:
            return (f"Origin: {origin[:100]!r} is another site; a request that changes "
                    "something is accepted only from the host's own origin")
    return None


class OriginGuard:
    """ASGI middleware: 403 for requests not addressed to the host, or cross-site changes."""

    def __init__(self, app: Any, base_url: str) -> None:
        self.app = app
        self.own = own_authorities(base_url)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer 403 with the reason, or pass the request on."""
        if scope["type"] == "http":
            reason = refusal(scope, self.own)
            if reason is not None:
                await error_response(403, reason)(scope, receive, send)
                return
        await self.app(scope, receive, send)
