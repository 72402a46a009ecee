"""Basic-auth publishing is off: FTP and the SCM site take Entra ID only.

App Service keeps a user name and password per app for FTP and the SCM (Kudu) site unless
``basicPublishingCredentialsPolicies/ftp`` and ``/scm`` say ``allow: false`` (Learn:
"Disable basic authentication in App Service deployments"). Nothing here uses them: Core
Tools publishes to Flex Consumption with the signed-in account (X10: no secrets).
"""

from tests.infra.checks import INFRA, scopes
from tests.infra.conftest import replace_once

POLICY = "Microsoft.Web/sites/basicPublishingCredentialsPolicies"


def policies(infra=INFRA):
    module = next(s for s in scopes(infra, {}) if s.path.name == "function-app.bicep")
    return {i.body["name"]: i.body["properties"]["allow"] for i in module.instances(POLICY)}


def test_ftp_and_scm_basic_auth_are_off():
    assert policies() == {"ftp": False, "scm": False}


def test_the_check_sees_scm_left_on(infra_copy):
    replace_once(infra_copy / "app" / "function-app.bicep", "allow: false", "allow: true")
    assert policies(infra_copy) == {"ftp": True, "scm": True}
