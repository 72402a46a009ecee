"""The simulator answers only requests addressed to it (DNS rebinding, cross-site changes).

The simulator asks for no key, as the local host does, so a browser page could POST to
``/_admin/faults`` or ``/payments`` as ``text/plain`` (no preflight), and a DNS-rebinding
page could read its ledger. So, as the local host's guard (docs/local-host.md): ``Host``
must name one of the simulator's own host names (loopback names by default, any port:
the port is chosen when the server binds), and a change (not GET, HEAD, OPTIONS) that
carries an ``Origin`` must come from one of them; programs send none. Else 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names a browser or program on this machine uses for a loopback server."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing (RFC 9110 section 9.2.1)."""


def _hostname(authority: str) -> str | None:
    """Return the host name of ``host[:port]`` (IPv6 without brackets), lower case, or None."""
    try:
        parts = urlsplit(f"//{authority.strip()}")
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:  # a malformed port or bracket
        return None
    return parts.hostname


def refusal(scope: dict[str, Any], hosts: frozenset[str]) -> str | None:
    """Return why a request is not for the simulator, or None if it is (module docstring)."""
    headers = Headers(scope=scope)
    host = headers.get("host", "")
    if _hostname(host) not in hosts:
        return (f"Host: {host[:100]!r} is not this simulator ({', '.join(sorted(hosts))}); "
                "it answers only requests addressed to it")
    origin = headers.get("origin")
    if origin is not None and scope.get("method", "GET").upper() not in SAFE_METHODS:
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or _hostname(parts.netloc) not in hosts:
            return (f"Origin: {origin[:100]!r} is another site; a request that changes "
                    "something is accepted only from the simulator's own origin")
    return None


class HostGuard:
    """ASGI middleware: 403 ``forbidden_host`` for requests not addressed to the simulator.

    ``hosts``: the host names it answers to (:data:`LOOPBACK_HOSTS` by default).
    """

    def __init__(self, app: Any, hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.hosts = frozenset(h.strip("[]").lower() for h in hosts)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer 403 with the reason, or pass the request on."""
        if scope["type"] == "http":
            reason = refusal(scope, self.hosts)
            if reason is not None:
                response = JSONResponse({"error": "forbidden_host", "message": reason}, 403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
