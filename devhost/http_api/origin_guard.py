"""The local host answers only its own origin (DNS rebinding and cross-site requests).

The local host listens on loopback and, like Core Tools, asks for no key: anything that
can reach the port may call it. A web page in the developer's browser can: it can POST
``.../instances/<id>/terminate`` with a ``text/plain`` body, which needs no CORS
preflight, and a DNS-rebinding page (a name of the attacker's that first resolves to the
attacker and then to 127.0.0.1) becomes same-origin with the host and reads every answer.

:class:`OriginGuard` closes both. Every request must name the host in ``Host`` as its own
address does: the authority of the base URL it serves, or a loopback name (``127.0.0.1``,
``localhost``, ``[::1]``) with the same port; a rebinding page sends its own name there.
A state-changing request (any method but GET, HEAD, OPTIONS) that carries an ``Origin``
must come from one of those same origins; programs (the SDK's durable client, curl) send
no ``Origin``. Both refusals are 403 with the reason, in the API's JSON error form.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from devhost.http_api.errors import error_response

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""Names of this machine a browser on it uses for a loopback server."""

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing (RFC 9110 section 9.2.1); any other must be same-origin."""


def own_authorities(base_url: str) -> frozenset[str]:
    """Return the ``host:port`` values a request to the host may carry in ``Host``.

    Parameters
    ----------
    base_url : str
        The host's base URL, e.g. ``http://127.0.0.1:7071``.

    Returns
    -------
    frozenset of str
        The base URL's authority and, for a loopback base URL, every loopback name with
        its port (lower case).
    """
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
    """ASGI middleware: 403 for requests not addressed to the host, or cross-site changes.

    Parameters
    ----------
    app : ASGI application
        The local host's HTTP application.
    base_url : str
        The host's base URL (:func:`own_authorities`).
    """

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
