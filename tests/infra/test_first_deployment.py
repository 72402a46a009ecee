"""The Bicep deploys the first time: no property an API version lacks, no parallel Cosmos DB
role-assignment writes.

Both kinds of failure only show in Azure, and only on a first deployment (or, for an unknown
property, silently: ARM may drop it), so they are checked here from the parsed Bicep:
the property table and its sources are in tests/infra/arm_schema.py, the Cosmos DB rule in
tests/infra/checks.py (parallel_cosmos_role_writes).
"""

import pytest

from tests.infra.arm_schema import SCHEMAS, SOURCES
from tests.infra.bicep_eval import parse_bicep
from tests.infra.checks import INFRA, parallel_cosmos_role_writes, schema_problems
from tests.infra.conftest import replace_once

COSMOS = INFRA / "app" / "cosmos.bicep"
SERVICEBUS = INFRA / "app" / "servicebus.bicep"

# Every optional part switched on: provisioned throughput, clients, operators, developer.
EVERYTHING_ON = {
    "cosmosServerless": False,
    "appReadsDeadLetterDepth": True,
    "operatorPrincipalId": "11111111-1111-1111-1111-111111111111",
    "developerPrincipalId": "22222222-2222-2222-2222-222222222222",
    "operatorsAppClientId": "44444444-4444-4444-4444-444444444444",
    "clients": [{"clientId": "acme", "principalId": "33333333-3333-3333-3333-333333333333",
                 "principalType": "ServicePrincipal"}],
    "durableBackend": "DurableTaskScheduler",
    "durableTaskSchedulerSku": "Dedicated",
}


# ---------------------------------------------------------------- properties per API version
@pytest.mark.parametrize("params", [{}, EVERYTHING_ON], ids=["parameters-file", "everything-on"])
def test_every_property_exists_in_its_api_version(params):
    assert schema_problems(params=params) == {}


def test_every_schema_entry_names_its_source():
    assert set(SOURCES) == set(SCHEMAS)


def test_service_bus_minimum_tls_needs_an_api_version_that_has_it():
    namespace = parse_bicep(SERVICEBUS)["resources"]["namespace"]
    assert namespace["api_version"] == "2024-01-01"
    assert "minimumTlsVersion" in SCHEMAS[("Microsoft.ServiceBus/namespaces", "2024-01-01")][
        "properties"]
    assert "minimumTlsVersion" not in SCHEMAS[("Microsoft.ServiceBus/namespaces", "2021-11-01")][
        "properties"]


def test_the_schema_check_reports_a_property_the_api_version_lacks(infra_copy):
    replace_once(infra_copy / "app" / "servicebus.bicep",
                 "'Microsoft.ServiceBus/namespaces@2024-01-01' = {",
                 "'Microsoft.ServiceBus/namespaces@2021-11-01' = {")
    assert schema_problems(infra_copy) == {
        "servicebus.bicep:namespace Microsoft.ServiceBus/namespaces@2021-11-01":
            ["properties.minimumTlsVersion"]}


def test_the_schema_check_reports_a_misspelt_nested_property(infra_copy):
    replace_once(infra_copy / "app" / "cosmos.bicep", "defaultConsistencyLevel: 'Session'",
                 "defaultConsistency: 'Session'")
    problems = schema_problems(infra_copy)
    assert problems == {
        "cosmos.bicep:account Microsoft.DocumentDB/databaseAccounts@2024-05-15":
            ["properties.consistencyPolicy.defaultConsistency"]}


def test_the_schema_check_reports_a_queue_property_from_queues_json(infra_copy):
    # queues.json is merged into every queue's ARM properties: a typo there is a typo in ARM.
    path = infra_copy / "queues.json"
    replace_once(path, '"maxDeliveryCount": 10', '"maxDeliveryCounts": 10')
    problems = schema_problems(infra_copy)
    assert problems == {
        "servicebus.bicep:queues Microsoft.ServiceBus/namespaces/queues@2024-01-01":
            ["properties.maxDeliveryCounts"]}


def test_the_schema_check_reports_an_api_version_missing_from_the_table(infra_copy):
    old = "Microsoft.Authorization/roleAssignments@2022-04-01' = {"
    replace_once(infra_copy / "app" / "rbac.bicep", old, old.replace("2022-04-01", "2015-07-01"))
    assert schema_problems(infra_copy) == {
        "rbac.bicep:telemetryAccess Microsoft.Authorization/roleAssignments@2015-07-01":
            ["no schema"]}


# ---------------------------------------------------------------- Cosmos DB role assignments
def test_cosmos_role_assignments_are_written_one_after_another():
    assert parallel_cosmos_role_writes(COSMOS) == set()


def test_every_cosmos_role_assignment_waits_for_all_earlier_ones():
    # Direct dependencies only: a condition-false resource is dropped from dependsOn.
    resources = parse_bicep(COSMOS)["resources"]
    operator = resources["operatorDataAccess"]["config"]["config"]["dependsOn"]
    developer = resources["developerDataAccess"]["config"]["config"]["dependsOn"]
    assert "appDataAccess" in operator
    assert {"appDataAccess", "operatorDataAccess"} <= set(developer)


def test_the_check_reports_role_assignments_without_an_order(infra_copy):
    path = infra_copy / "app" / "cosmos.bicep"
    replace_once(path, "    appDataAccess\n    operatorDataAccess\n", "")
    assert parallel_cosmos_role_writes(path) == {"appDataAccess || developerDataAccess",
                                                  "operatorDataAccess || developerDataAccess"}


def test_the_check_reports_a_role_assignment_loop_without_batch_size(tmp_path):
    path = tmp_path / "roles.bicep"
    path.write_text("""
param principals array
resource account 'Microsoft.DocumentDB/databaseAccounts@2024-05-15' existing = {
  name: 'acct'
}
resource access 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = [
    for p in principals: {
  parent: account
  name: guid(account.id, p, 'role')
  properties: {
    principalId: p
  }
}]
""")
    assert parallel_cosmos_role_writes(path) == {"access: loop without @batchSize(1)"}
    path.write_text(path.read_text().replace("resource access", "@batchSize(1)\nresource access"))
    assert parallel_cosmos_role_writes(path) == set()
