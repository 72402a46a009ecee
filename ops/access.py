"""Who may use the operations routes, and who an operator action is by.

In Azure the routes sit behind App Service authentication (Easy Auth, ``authsettingsV2``
in ``infra/app/function-app.bicep``): Entra ID sign-in is required for every request,
the platform strips any incoming ``X-MS-CLIENT-*`` header and sets its own for the
signed-in caller, and it sets the app setting ``WEBSITE_AUTH_ENABLED`` to ``True`` (Learn:
"Work with user identities in Azure App Service authentication"; "Authentication and
authorization in Azure App Service"). There the caller is the platform's principal only:

- its name is ``X-MS-CLIENT-PRINCIPAL-NAME``;
- its app roles are the role claims of ``X-MS-CLIENT-PRINCIPAL`` (Base64 JSON with
  ``claims`` of ``typ``/``val`` and the ``role_typ`` naming the role claim type);
- an action (resubmit) needs the app role :data:`OPERATOR_ROLE`; ``X-Ops-Operator`` is
  ignored.

On the local host (``MESSAGING_BACKEND=local``, no App Service) the simple path stays:
anyone who reaches the host may read, and an action names its operator in
``X-Ops-Operator`` (the dashboard sends what the operator typed). Anywhere else, an app
with neither (Azure without authentication configured, or Core Tools against real
services) refuses the routes: without the platform nothing vouches for a caller.
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
"""App role of the operators' app registration that operator actions require (Azure)."""
DETAILS_ROLE = "Orders.Details"
"""App role a signed-in operator needs to see classified customer and payment data (X10)."""

PRINCIPAL_HEADER = "x-ms-client-principal"
PRINCIPAL_NAME_HEADER = "x-ms-client-principal-name"
OPERATOR_HEADER = "x-ops-operator"
_OPERATOR = re.compile(r"^[\w.@ -]{1,80}$")
_ROLE_CLAIM_TYPES = {"roles", "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}


class AccessDenied(Exception):
    """A request the operations routes refuse, with its HTTP status and the reason.

    The dashboard answers every refusal with this class (``ops.dashboard.web.Problem``).

    Parameters
    ----------
    status : int
        A 4xx status: here 401, 403 or 400.
    reason : str
        One sentence saying what is wrong and how to ask instead.
    """

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Caller:
    """Who sent a request to an operations route.

    Attributes
    ----------
    name : str or None
        The signed-in name (Azure) or the typed operator name (local host), if any.
    roles : frozenset of str
        App roles of the signed-in principal; on the local host every caller is treated
        as an operator.
    signed_in : bool
        True when App Service authentication vouches for ``name`` and ``roles``.
    """

    name: str | None
    roles: frozenset[str]
    signed_in: bool


def caller_of(headers: Mapping[str, str], settings: Any) -> Caller:
    """Return the caller of a request to an operations route (see the module docstring).

    Parameters
    ----------
    headers : mapping of str to str
        The request's headers (case-insensitive, as ``azure.functions.HttpRequest`` has).
    settings : orders.settings.Settings
        ``WEBSITE_AUTH_ENABLED`` (platform-set) and ``MESSAGING_BACKEND``.

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
    """Decide whether a view may show classified data (SPEC S9, X10).

    Only when asked for (``details=true``), and for a signed-in caller (Azure) only with
    :data:`DETAILS_ROLE`; on the local host asking is enough.

    Raises
    ------
    AccessDenied
        As :func:`caller_of`; 403 if details were asked for without the role.
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
