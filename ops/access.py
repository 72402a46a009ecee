"""Who may use the operations routes, and who an operator action is by.

Azure: App Service authentication's principal only; local host: ``X-Ops-Operator``;
elsewhere refused. See docs/deploy.md, "Operators: Entra ID sign-in".
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OPERATOR_ROLE = "Orders.Operator"
DETAILS_ROLE = "Orders.Details"
"""App role a signed-in operator needs to see classified customer and payment data (X10)."""
READER_ROLE = "Orders.Reader"
"""App role that lets a signed-in principal read the operations routes, and no more."""
READ_ROLES = frozenset({READER_ROLE, OPERATOR_ROLE, DETAILS_ROLE})
"""Any of them lets a signed-in principal read: a sign-in alone does not (X10)."""

PRINCIPAL_HEADER = "x-ms-client-principal"
PRINCIPAL_NAME_HEADER = "x-ms-client-principal-name"
OPERATOR_HEADER = "x-ops-operator"
_OPERATOR = re.compile(r"^[\w.@ -]{1,80}$")
_ROLE_CLAIM_TYPES = {"roles", "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}


class AccessDenied(Exception):
    """A request the operations routes refuse: a 4xx ``status`` and a one-sentence ``reason``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Caller:
    """Who sent a request; ``signed_in`` when App Service authentication vouches for it."""

    name: str | None
    roles: frozenset[str]
    signed_in: bool


def caller_of(headers: Mapping[str, str], settings: Any) -> Caller:
    """Return the caller of a request to an operations route (see the module docstring).

    Raises
    ------
    AccessDenied
        401 if App Service authentication is on but the request carries no principal,
        403 if neither it nor the local host vouches for callers.
    """
    if settings.WEBSITE_AUTH_ENABLED:
        encoded = headers.get(PRINCIPAL_HEADER)
        if not encoded:
            raise AccessDenied(401, "sign in: App Service authentication passed no "
                                    "principal (X-MS-CLIENT-PRINCIPAL) for this request")
        return Caller(headers.get(PRINCIPAL_NAME_HEADER) or None, _roles(encoded), True)
    if settings.MESSAGING_BACKEND == "local":
        return Caller(headers.get(OPERATOR_HEADER) or None, frozenset({OPERATOR_ROLE}), False)
    raise AccessDenied(403, "the operations routes need App Service authentication "
                            "(Entra ID sign-in, WEBSITE_AUTH_ENABLED) outside the local "
                            "host; see docs/deploy.md, 'Operators: Entra ID sign-in'")


def reader_of(headers: Mapping[str, str], settings: Any) -> Caller:
    """Return the caller of a read of an operations route.

    A principal signed in to the operators' registration may hold no app role (a default
    access assignment, or a registration that does not require one): reading orders,
    alerts and dead letters needs one of :data:`READ_ROLES`.

    Raises
    ------
    AccessDenied
        As :func:`caller_of`; 403 if a signed-in caller holds none of :data:`READ_ROLES`.
    """
    caller = caller_of(headers, settings)
    if caller.signed_in and not caller.roles & READ_ROLES:
        raise AccessDenied(403, f"reading the operations routes needs one of the app roles "
                                f"{', '.join(sorted(READ_ROLES))}; "
                                f"{caller.name or 'the signed-in principal'} holds none")
    return caller


def operator_of(headers: Mapping[str, str], settings: Any) -> str:
    """Return the operator an action is performed by.

    Raises
    ------
    AccessDenied
        As :func:`caller_of`; 403 if a signed-in caller lacks :data:`OPERATOR_ROLE` or the
        local request names no operator; 400 if the name is not 1-80 letters, digits,
        spaces or ``.@_-``.
    """
    caller = caller_of(headers, settings)
    if caller.signed_in and OPERATOR_ROLE not in caller.roles:
        raise AccessDenied(403, f"operator actions need the app role {OPERATOR_ROLE!r}; "
                                f"{caller.name or 'the signed-in principal'} does not hold it")
    if not caller.name:
        raise AccessDenied(403, "operator actions need the operator's name in the "
                                "X-Ops-Operator header (the dashboard sends it; a form or "
                                "cross-site request cannot)")
    if not _OPERATOR.fullmatch(caller.name):
        raise AccessDenied(400, "operator name: 1 to 80 letters, digits, spaces or . @ _ -")
    return caller.name


def may_see_details(headers: Mapping[str, str], asked: bool, settings: Any) -> bool:
    """Decide whether a view may show classified data (S9, X10): asked for, and with the role.

    Raises
    ------
    AccessDenied
        As :func:`caller_of`; 403 if details were asked for without :data:`DETAILS_ROLE`.
    """
    if not asked:
        return False
    caller = caller_of(headers, settings)
    if caller.signed_in and DETAILS_ROLE not in caller.roles:
        raise AccessDenied(403, f"details=true shows classified customer and payment data: "
                                f"it needs the app role {DETAILS_ROLE!r}")
    return True


def _roles(encoded: str) -> frozenset[str]:
    """App roles in an ``X-MS-CLIENT-PRINCIPAL`` value; empty if it cannot be read."""
    try:
        principal = json.loads(base64.b64decode(encoded, validate=False))
    except (binascii.Error, ValueError):
        return frozenset()
    if not isinstance(principal, dict) or not isinstance(principal.get("claims"), list):
        return frozenset()
    types = _ROLE_CLAIM_TYPES | {str(principal.get("role_typ") or "roles")}
    return frozenset(str(c["val"]) for c in principal["claims"]
                     if isinstance(c, dict) and c.get("typ") in types and "val" in c)
