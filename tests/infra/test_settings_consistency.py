"""Every app setting the code reads is set by the Bicep and in local.settings.json."""

import json

import pytest

from orders.settings import Settings
from tests.infra.checks import (
    INFRA,
    LOCAL_SETTINGS,
    QUEUES_JSON,
    bicep_app_settings,
    code_settings,
    is_runtime,
    local_settings,
    missing_settings,
)
from tests.infra.conftest import remove_line

LOCAL_ONLY = {
    # Data folder of the local host's SQLite stand-ins; the host sets it (devhost/run/runtime.py).
    # In Azure both backends are Azure services, which never read it.
    "DEVHOST_DATA_DIR",
    # Prices from the catalogue: on by default, and Azure keeps the default; only test
    # runs whose orders name SKUs no catalogue holds turn it off.
    "PRICE_FROM_CATALOGUE",
}
"""Settings the code reads that the Azure deployment deliberately does not set."""

PLATFORM_SET = {
    # App Service sets it to True when its authentication fronts the app; a deployment that
    # set it itself would make the app trust a header any caller can send.
    "WEBSITE_AUTH_ENABLED",
}
"""Settings Azure itself provides: read by the code, never set by the Bicep."""

FLEX_FORBIDDEN = {"FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_EXTENSION_VERSION",
                  "WEBSITE_RUN_FROM_PACKAGE", "AzureWebJobsStorage"}
"""Flex Consumption takes the runtime from functionAppConfig and rejects the first three
as app settings; a plain AzureWebJobsStorage would be a connection string (with a key)."""

# Deployment-time values stand in with realistic shapes when the settings are validated.
PLACEHOLDERS = {
    "COSMOS_ENDPOINT": "https://cosmos-orders-x.documents.azure.com:443/",
    "SERVICEBUS__fullyQualifiedNamespace": "sb-orders-x.servicebus.windows.net",
    "APPLICATIONINSIGHTS_CONNECTION_STRING": "IngestionEndpoint=https://placeholder.invalid/",
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "Authorization=AAD;ClientId=placeholder",
}


@pytest.fixture(scope="module")
def required(triggers):
    return code_settings(Settings, triggers)


def test_required_settings_include_fields_bindings_and_connection(required):
    assert {"STORE_BACKEND", "MAX_FAILURES", "DEVHOST_DATA_DIR"} <= required
    assert {"STARTER_SCHEDULE", "SUPERVISOR_SCHEDULE"} <= required
    assert "SERVICEBUS__fullyQualifiedNamespace" in required


def test_every_code_setting_is_set_by_the_bicep(required):
    assert missing_settings(required, bicep_app_settings(),
                            exempt=LOCAL_ONLY | PLATFORM_SET) == set()


def test_the_bicep_never_sets_what_the_platform_sets(required):
    assert PLATFORM_SET <= required
    assert PLATFORM_SET.isdisjoint(bicep_app_settings())


def test_every_code_setting_is_in_local_settings(required):
    missing = missing_settings(required, local_settings())
    assert missing == set()


def test_local_only_settings_are_really_settings(required):
    assert LOCAL_ONLY <= required


def test_bicep_sets_identity_based_connections_only():
    settings = bicep_app_settings()
    assert not FLEX_FORBIDDEN & set(settings)
    assert settings["AzureWebJobsStorage__credential"] == "managedidentity"
    assert settings["SERVICEBUS__credential"] == "managedidentity"
    for name in ("AzureWebJobsStorage__accountName", "AzureWebJobsStorage__clientId",
                 "SERVICEBUS__fullyQualifiedNamespace", "SERVICEBUS__clientId",
                 "AZURE_CLIENT_ID", "APPLICATIONINSIGHTS_AUTHENTICATION_STRING"):
        assert name in settings


def bicep_settings():
    values = {k: PLACEHOLDERS.get(k, v) for k, v in bicep_app_settings().items()
              if k in Settings.model_fields}
    assert not [k for k, v in values.items() if is_runtime(v)]
    return Settings.model_validate(values)


def test_bicep_values_pass_the_settings_rules():
    settings = bicep_settings()
    assert (settings.STORE_BACKEND, settings.MESSAGING_BACKEND) == ("cosmos", "servicebus")


def test_bicep_values_pass_the_start_up_retry_budget_check():
    # The deployed app runs orders.startup.on_start -> check_budget with the deployed
    # queues.json; a deployment that fails it would refuse every message (X2).
    from orders.budget import check_budget
    from orders.queues import load_queue_limits

    calls = check_budget(bicep_settings(), load_queue_limits(QUEUES_JSON))
    assert (calls["payment"], calls["shipping"]) == (120, 120)


def test_local_values_pass_the_settings_rules():
    values = {k: v for k, v in local_settings().items() if k in Settings.model_fields}
    settings = Settings.model_validate({**values, "DEVHOST_DATA_DIR": ".data"})
    assert settings.MESSAGING_BACKEND == "local"


def test_outputs_are_named_like_the_settings_they_feed():
    from tests.infra.bicep_eval import parse_bicep

    outputs = set(parse_bicep(INFRA / "main.bicep")["outputs"])
    settings = set(bicep_app_settings())
    assert {"COSMOS_ENDPOINT", "COSMOS_DATABASE", "SERVICEBUS__fullyQualifiedNamespace",
            "AZURE_CLIENT_ID"} <= outputs & settings
    for name in outputs - settings:
        assert name.isupper(), name


# ---------------------------------------------------------------- the checks can fail
def test_bicep_check_reports_a_removed_setting(required, infra_copy):
    path = infra_copy / "main.parameters.json"
    data = json.loads(path.read_text())
    del data["parameters"]["orderSettings"]["value"]["MAX_FAILURES"]
    path.write_text(json.dumps(data))
    assert missing_settings(required, bicep_app_settings(infra_copy),
                            exempt=LOCAL_ONLY | PLATFORM_SET) == {"MAX_FAILURES"}


def test_every_service_of_the_catalogue_gets_its_url_setting(required):
    from azurekit.services import catalogue

    urls = {spec.url_setting for spec in catalogue().services.values()}
    assert urls <= required
    assert urls <= set(bicep_app_settings()) and urls <= set(local_settings())
    assert bicep_app_settings()["SHIPPING_API_URL"] == "https://shipping.dev.example.invalid"


def test_bicep_check_reports_a_service_without_a_url(required, infra_copy):
    path = infra_copy / "main.parameters.json"
    data = json.loads(path.read_text())
    del data["parameters"]["serviceUrls"]["value"]["SHIPPING_API_URL"]
    path.write_text(json.dumps(data))
    assert missing_settings(required, bicep_app_settings(infra_copy),
                            exempt=LOCAL_ONLY | PLATFORM_SET) == {"SHIPPING_API_URL"}


def test_bicep_check_reports_a_removed_host_setting(infra_copy):
    remove_line(infra_copy / "app" / "function-app.bicep", "AzureWebJobsStorage__clientId:")
    needed = {"AzureWebJobsStorage__accountName", "AzureWebJobsStorage__clientId"}
    assert missing_settings(needed, bicep_app_settings(infra_copy)) == \
        {"AzureWebJobsStorage__clientId"}


def test_local_check_reports_a_removed_setting(required, tmp_path):
    complete = {**{name: "x" for name in required}, **local_settings()}
    del complete["STARTER_SCHEDULE"]
    path = tmp_path / "local.settings.json"
    path.write_text(json.dumps({"IsEncrypted": False, "Values": complete}))
    assert missing_settings(required, local_settings(path)) == {"STARTER_SCHEDULE"}


def test_local_settings_file_is_the_repository_one():
    assert LOCAL_SETTINGS.name == "local.settings.json" and LOCAL_SETTINGS.is_file()
