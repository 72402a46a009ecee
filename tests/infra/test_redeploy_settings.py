"""A redeploy writes the settings the last one did: every value an operator tunes is a
parameter kept in infra/main.parameters.json.

The Bicep owns every app setting of the Function App (``Microsoft.Web/sites/config``
``appsettings`` replaces the whole set), so a value set by hand with ``az functionapp
config appsettings set`` is gone after the next ``az deployment group create``, and a
parameter passed only on one command line is gone when the next command omits it
(docs/deploy.md, "Redeploying"). Hence: no tuning literal in the Bicep, every parameter that
feeds a setting in the parameters file, and a fresh environment on the newest workflow
version new orders start on (X6), which is the code's own default.
"""

import json

from orders.names import WORKFLOW_VERSIONS
from orders.settings import Settings
from tests.infra.checks import (
    INFRA,
    LOCAL_SETTINGS,
    bicep_app_settings,
    literal_settings,
    load_parameter_file,
    local_settings,
)
from tests.infra.conftest import replace_once

WIRING = {
    # Which adapters the deployed app uses: Azure's, by construction of this deployment.
    "STORE_BACKEND", "MESSAGING_BACKEND",
    # Identity-based connections: never a key (X10).
    "SERVICEBUS__credential", "AzureWebJobsStorage__credential",
    # The Durable Task Scheduler provider and the name of the setting holding its
    # connection, both fixed by durableBackend.
    "AzureFunctionsJobHost__extensions__durableTask__storageProvider__type",
    "AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName",
}
"""Settings the Bicep writes as literals: how the deployment is wired, nothing to tune."""

SETTING_PARAMETERS = {
    "orderSettings", "serviceUrls", "appSettingOverrides", "clients", "operatorsAppClientId",
    "starterSchedule", "supervisorSchedule", "opsSnapshotSchedule", "retentionSchedule",
    "durableBackend",
}
"""Parameters of main.bicep that become app settings."""


def parameters():
    return load_parameter_file(INFRA / "main.parameters.json")


def test_every_literal_setting_is_wiring():
    assert literal_settings() == WIRING


def test_every_parameter_that_feeds_a_setting_is_in_the_parameters_file():
    assert SETTING_PARAMETERS <= set(parameters())


def test_every_tuning_setting_of_the_code_is_in_order_settings():
    tuned = set(parameters()["orderSettings"])
    wired = set(bicep_app_settings()) - tuned
    # Each field of Settings the Bicep sets is either tuned in the file or wired above.
    fields = set(Settings.model_fields) & set(bicep_app_settings())
    assert fields <= tuned | wired
    assert {"WORKFLOW_VERSION", "ORDER_DEADLINE_S", "MAX_FAILURES",
            "PYTHON_THREADPOOL_THREAD_COUNT"} <= tuned


def test_a_fresh_environment_starts_on_the_version_new_orders_start_on():
    newest = Settings.model_fields["WORKFLOW_VERSION"].default
    assert newest in WORKFLOW_VERSIONS
    assert int(parameters()["orderSettings"]["WORKFLOW_VERSION"]) == newest
    assert int(bicep_app_settings()["WORKFLOW_VERSION"]) == newest
    assert int(local_settings(LOCAL_SETTINGS)["WORKFLOW_VERSION"]) == newest


def test_the_operators_registration_survives_a_redeploy():
    # The onboarding command and every redeploy pass the same file; an empty value is
    # what a first deployment without sign-in has (docs/deploy.md, "Operators").
    assert "operatorsAppClientId" in parameters()


def test_the_check_sees_a_tuning_literal(infra_copy):
    replace_once(infra_copy / "main.bicep", "      RETENTION_SCHEDULE: retentionSchedule\n",
                 "      RETENTION_SCHEDULE: retentionSchedule\n      RETENTION_DAYS: '30'\n")
    assert literal_settings(infra_copy) - WIRING == {"RETENTION_DAYS"}


def test_the_check_sees_a_host_literal(infra_copy):
    replace_once(infra_copy / "app" / "function-app.bicep",
                 "    AzureWebJobsStorage__clientId: identityClientId\n",
                 "    AzureWebJobsStorage__clientId: identityClientId\n"
                 "    WEBSITE_TIME_ZONE: 'UTC'\n")
    assert literal_settings(infra_copy) - WIRING == {"WEBSITE_TIME_ZONE"}


def test_the_check_sees_a_stale_workflow_version(infra_copy):
    path = infra_copy / "main.parameters.json"
    data = json.loads(path.read_text())
    data["parameters"]["orderSettings"]["value"]["WORKFLOW_VERSION"] = "1"
    path.write_text(json.dumps(data))
    newest = Settings.model_fields["WORKFLOW_VERSION"].default
    assert int(bicep_app_settings(infra_copy)["WORKFLOW_VERSION"]) != newest
