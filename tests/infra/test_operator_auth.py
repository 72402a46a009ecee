"""Operators sign in with Entra ID through App Service authentication, configured in Bicep.

With ``operatorsAppClientId`` set, ``authsettingsV2`` requires a sign-in for every request
(unauthenticated browsers go to the Entra ID login page), validates tokens for the
operators' app registration and proves the app to Entra ID with its managed identity
(``clientSecretSettingName`` = ``OVERRIDE_USE_MI_FIC_ASSERTION_CLIENTID``, a federated
credential, no client secret: Learn, "Configure your App Service or Azure Functions app to
use Microsoft Entra sign-in", managed identity instead of a secret). The platform then sets
``WEBSITE_AUTH_ENABLED`` and the principal headers that ops/access.py reads (the Bicep must
never set that setting itself: tests/infra/test_settings_consistency.py).
"""

from tests.infra.checks import INFRA, RUNTIME, bicep_app_settings, scopes
from tests.infra.conftest import replace_once

OPS_APP = "44444444-4444-4444-4444-444444444444"
FIC_SETTING = "OVERRIDE_USE_MI_FIC_ASSERTION_CLIENTID"


def auth_configs(infra=INFRA, **params):
    module = next(s for s in scopes(infra, params) if s.path.name == "function-app.bicep")
    return [i for i in module.instances("Microsoft.Web/sites/config")
            if i.body["name"] == "authsettingsV2" and i.condition]


def test_sign_in_is_required_for_every_request_with_the_operators_registration():
    (config,) = auth_configs(operatorsAppClientId=OPS_APP)
    auth = config.body["properties"]
    assert auth["platform"]["enabled"] is True
    assert auth["globalValidation"]["requireAuthentication"] is True
    assert auth["globalValidation"]["unauthenticatedClientAction"] == "RedirectToLoginPage"
    assert auth["httpSettings"]["requireHttps"] is True
    aad = auth["identityProviders"]["azureActiveDirectory"]
    assert aad["enabled"] is True and aad["registration"]["clientId"] == OPS_APP
    assert aad["validation"]["allowedAudiences"][1] == OPS_APP


def test_the_app_proves_itself_with_its_identity_not_a_secret():
    (config,) = auth_configs(operatorsAppClientId=OPS_APP)
    registration = config.body["properties"]["identityProviders"]["azureActiveDirectory"][
        "registration"]
    assert registration["clientSecretSettingName"] == FIC_SETTING
    settings = bicep_app_settings(params={"operatorsAppClientId": OPS_APP})
    assert settings[FIC_SETTING] is RUNTIME  # the identity's client id, known at deployment
    assert "WEBSITE_AUTH_ENABLED" not in settings


def test_only_the_durable_http_api_and_the_admin_api_are_left_to_their_keys():
    # The host requires its system key on the first and its master key on the second
    # whatever Easy Auth does (docs/deploy.md, "After deploying").
    (config,) = auth_configs(operatorsAppClientId=OPS_APP)
    assert config.body["properties"]["globalValidation"]["excludedPaths"] == [
        "/runtime/webhooks/durabletask/*", "/admin/*"]


def test_without_a_registration_nothing_is_configured_and_no_setting_added():
    assert auth_configs() == []
    assert FIC_SETTING not in bicep_app_settings()


def test_the_check_sees_anonymous_access_allowed(infra_copy):
    replace_once(infra_copy / "app" / "function-app.bicep", "requireAuthentication: true",
                 "requireAuthentication: false")
    (config,) = auth_configs(infra_copy, operatorsAppClientId=OPS_APP)
    assert config.body["properties"]["globalValidation"]["requireAuthentication"] is False
