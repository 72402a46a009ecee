"""The Durable Functions backend is a deployment parameter: both choices rendered.

``durableBackend`` selects Azure Storage (the host storage account, the default) or the
Durable Task Scheduler: a ``Microsoft.DurableTask/schedulers`` resource with one task hub
named as host.json's ``hubName``, the app's identity "Durable Task Data Contributor" on that
task hub only, operators "Durable Task Data Reader" on it (the dashboard), and the host's
storage provider switched by ``AzureFunctionsJobHost__extensions__durableTask__
storageProvider__*`` app settings, so one host.json serves both (Learn: "Configure Durable
Task Scheduler" for Durable Functions; "Configure managed identity for Durable Task
Scheduler"; docs/deploy.md, "Durable backend").
"""

import json

import pytest

from tests.infra.checks import (
    INFRA,
    REPO,
    bicep_app_settings,
    is_runtime,
    role_grants,
    scopes,
)
from tests.infra.conftest import replace_once

DTS = {"durableBackend": "DurableTaskScheduler"}
OPERATOR = "11111111-1111-1111-1111-111111111111"
CONTRIBUTOR = "0ad04412-c4d5-4796-b79c-f76d14c8d402"
"""Durable Task Data Contributor."""
READER = "d6a5505f-6ebb-45a4-896e-ac8274cfc0ac"
"""Durable Task Data Reader."""
TASK_HUB = "Microsoft.DurableTask/schedulers/taskHubs"
OVERRIDE = "AzureFunctionsJobHost__extensions__durableTask__storageProvider__"
CONNECTION = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"


def hub_name():
    return json.loads((REPO / "host.json").read_text())["extensions"]["durableTask"]["hubName"]


def scheduler_scope(infra=INFRA, **params):
    found = [s for s in scopes(infra, params) if s.path.name == "durable-task-scheduler.bicep"]
    return found[0] if found else None


def test_azure_storage_is_the_default_and_deploys_no_scheduler():
    assert scheduler_scope() is None
    settings = bicep_app_settings()
    assert not [name for name in settings if name.startswith(OVERRIDE) or name == CONNECTION]
    # The task hub lives in the host storage account the identity already reaches.
    assert settings["AzureWebJobsStorage__credential"] == "managedidentity"


@pytest.mark.parametrize(("sku", "expected"), [
    ("Consumption", {"name": "Consumption"}),
    ("Dedicated", {"name": "Dedicated", "capacity": 1}),
])
def test_the_scheduler_and_its_task_hub_named_as_host_json(sku, expected):
    scope = scheduler_scope(**DTS, durableTaskSchedulerSku=sku)
    (scheduler,) = scope.instances("Microsoft.DurableTask/schedulers")
    assert scheduler.body["properties"]["sku"] == expected
    (hub,) = scope.instances(TASK_HUB)
    assert hub.body["name"] == hub_name() == "OrdersTaskHub"


def test_the_app_is_contributor_on_the_task_hub_only():
    grants = role_grants(scheduler_scope(**DTS))
    (app,) = [g for g in grants if g.role == CONTRIBUTOR]
    assert (app.scope_type, app.scope_name) == (TASK_HUB, hub_name())
    assert is_runtime(app.principal)  # the identity's principal id, known at deployment
    assert {g.scope_type for g in grants} == {TASK_HUB}


@pytest.mark.parametrize(("operator", "readers"), [("", set()), (OPERATOR, {OPERATOR})])
def test_operators_get_the_dashboard_reader_role_on_the_task_hub(operator, readers):
    grants = role_grants(scheduler_scope(**DTS, operatorPrincipalId=operator))
    assert {g.principal for g in grants if g.role == READER} == readers
    assert {(g.scope_type, g.scope_name) for g in grants if g.role == READER} <= \
        {(TASK_HUB, hub_name())}


def test_the_scheduler_settings_select_the_managed_provider_with_the_identity():
    settings = bicep_app_settings(params=DTS)
    assert settings[OVERRIDE + "type"] == "azureManaged"
    assert settings[OVERRIDE + "connectionStringName"] == CONNECTION
    # Endpoint=<scheduler endpoint>;Authentication=ManagedIdentity;ClientID=<identity>
    assert is_runtime(settings[CONNECTION])
    text = (INFRA / "app" / "durable-task-scheduler.bicep").read_text()
    assert "Authentication=ManagedIdentity;ClientID=${appClientId}" in text
    # Everything else is the same deployment.
    others = {k: v for k, v in settings.items() if not k.startswith(OVERRIDE) and k != CONNECTION}
    assert others.keys() == bicep_app_settings().keys()


def test_the_task_hub_follows_host_json(infra_copy):
    host = infra_copy.parent / "host.json"
    data = json.loads((REPO / "host.json").read_text())
    data["extensions"]["durableTask"]["hubName"] = "OtherHub"
    host.write_text(json.dumps(data))
    (hub,) = scheduler_scope(infra_copy, **DTS).instances(TASK_HUB)
    assert hub.body["name"] == "OtherHub"


def test_the_check_sees_a_role_at_scheduler_scope(infra_copy):
    path = infra_copy / "app" / "durable-task-scheduler.bicep"
    text = path.read_text()
    head, tail = text.split("resource appAccess", 1)
    tail = tail.replace("scope: taskHub", "scope: scheduler", 1)
    path.write_text(f"{head}resource appAccess{tail}")
    grants = role_grants(scheduler_scope(infra_copy, **DTS))
    assert {g.scope_type for g in grants if g.role == CONTRIBUTOR} == \
        {"Microsoft.DurableTask/schedulers"}


def test_an_unknown_backend_is_refused_by_the_parameter():
    from tests.infra.bicep_eval import parse_bicep

    decorators = parse_bicep(INFRA / "main.bicep")["parameters"]["durableBackend"]["decorators"]
    (allowed,) = [d["argument"] for d in decorators if d["type"] == "allowed"]
    assert sorted(allowed) == ["AzureStorage", "DurableTaskScheduler"]


def test_the_check_sees_a_provider_type_typo(infra_copy):
    replace_once(infra_copy / "main.bicep", "storageProvider__type: 'azureManaged'",
                 "storageProvider__type: 'AzureManaged2'")
    assert bicep_app_settings(infra_copy, DTS)[OVERRIDE + "type"] != "azureManaged"
