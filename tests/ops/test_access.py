"""Who may use the operations routes: the platform's principal in Azure, the typed name locally.

App Service authentication sets ``X-MS-CLIENT-PRINCIPAL-NAME`` and ``X-MS-CLIENT-PRINCIPAL``
(Base64 JSON of the signed-in principal's claims) and ``WEBSITE_AUTH_ENABLED=True``; the
principal below has the shape Learn documents ("Work with user identities in Azure App
Service authentication": ``auth_typ``, ``claims`` of ``typ``/``val``, ``name_typ``,
``role_typ``).
"""

import base64
import json
from types import SimpleNamespace

import pytest

from ops.access import (
    DETAILS_ROLE,
    OPERATOR_ROLE,
    READER_ROLE,
    AccessDenied,
    caller_of,
    operator_of,
    reader_of,
)

AZURE = SimpleNamespace(WEBSITE_AUTH_ENABLED=True, MESSAGING_BACKEND="servicebus")
AZURE_WITHOUT_AUTH = SimpleNamespace(WEBSITE_AUTH_ENABLED=False, MESSAGING_BACKEND="servicebus")
LOCAL = SimpleNamespace(WEBSITE_AUTH_ENABLED=False, MESSAGING_BACKEND="local")
ROLE_TYPE = "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"


def principal(*roles, role_typ=ROLE_TYPE, claim_typ=None):
    claims = [{"typ": "name", "val": "Alice"},
              {"typ": "preferred_username", "val": "alice@contoso.com"},
              *({"typ": claim_typ or role_typ, "val": r} for r in roles)]
    data = {"auth_typ": "aad", "claims": claims, "name_typ": "name", "role_typ": role_typ}
    return base64.b64encode(json.dumps(data).encode()).decode()


def signed_in(*roles, **extra):
    return {"x-ms-client-principal-name": "alice@contoso.com",
            "x-ms-client-principal": principal(*roles), **extra}


def test_in_azure_the_operator_is_the_signed_in_principal_never_the_typed_name():
    headers = signed_in(OPERATOR_ROLE, **{"x-ops-operator": "mallory"})
    assert operator_of(headers, AZURE) == "alice@contoso.com"


def test_in_azure_an_action_needs_the_operators_app_role():
    with pytest.raises(AccessDenied, match=OPERATOR_ROLE) as denied:
        operator_of(signed_in("Orders.Reader"), AZURE)
    assert denied.value.status == 403
    assert caller_of(signed_in("Orders.Reader"), AZURE).roles == {"Orders.Reader"}


def test_roles_under_the_short_roles_claim_type_count_too():
    headers = {"x-ms-client-principal-name": "alice@contoso.com",
               "x-ms-client-principal": principal(OPERATOR_ROLE, role_typ="roles")}
    assert operator_of(headers, AZURE) == "alice@contoso.com"


def test_in_azure_a_request_without_the_platform_principal_is_401():
    with pytest.raises(AccessDenied) as denied:
        caller_of({"x-ops-operator": "mallory",
                   "x-ms-client-principal-name": "alice@contoso.com"}, AZURE)
    assert denied.value.status == 401


def test_an_unreadable_principal_holds_no_role():
    headers = {"x-ms-client-principal-name": "alice@contoso.com",
               "x-ms-client-principal": "not base64 json"}
    assert caller_of(headers, AZURE).roles == frozenset()
    with pytest.raises(AccessDenied, match=OPERATOR_ROLE):
        operator_of(headers, AZURE)


def test_azure_without_app_service_authentication_refuses_reads_and_actions():
    headers = signed_in(OPERATOR_ROLE, **{"x-ops-operator": "alice"})
    for check in (caller_of, operator_of):
        with pytest.raises(AccessDenied, match="App Service authentication") as denied:
            check(headers, AZURE_WITHOUT_AUTH)
        assert denied.value.status == 403


def test_locally_the_typed_name_is_the_operator_and_the_principal_header_is_ignored():
    headers = {"x-ops-operator": "mallory", "x-ms-client-principal-name": "alice@contoso.com"}
    assert operator_of(headers, LOCAL) == "mallory"
    assert caller_of({}, LOCAL).name is None  # reading needs no name


def test_locally_an_action_without_a_name_or_with_a_bad_one_is_refused():
    with pytest.raises(AccessDenied, match="X-Ops-Operator") as denied:
        operator_of({"x-ms-client-principal-name": "admin"}, LOCAL)
    assert denied.value.status == 403
    with pytest.raises(AccessDenied, match="operator name") as denied:
        operator_of({"x-ops-operator": "<b>eve</b>"}, LOCAL)
    assert denied.value.status == 400


@pytest.mark.parametrize("roles, allowed", [
    ((), False), (("Orders.Unrelated",), False), ((READER_ROLE,), True),
    ((OPERATOR_ROLE,), True), ((DETAILS_ROLE,), True)])
def test_in_azure_a_read_needs_an_app_role_not_only_a_sign_in(roles, allowed):
    headers = signed_in(*roles)
    if allowed:
        assert reader_of(headers, AZURE).name == "alice@contoso.com"
        return
    with pytest.raises(AccessDenied, match="needs one of the app roles") as denied:
        reader_of(headers, AZURE)
    assert denied.value.status == 403


def test_locally_anyone_who_reaches_the_host_may_read():
    assert reader_of({}, LOCAL).name is None
