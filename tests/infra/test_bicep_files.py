"""All Bicep parses (pycep-parser), modules are pinned, roles are named and commented."""

import json
import re

import pytest

from tests.infra.bicep_eval import Scope, parse_bicep
from tests.infra.checks import INFRA, parameter_file_problems

BICEP_FILES = sorted(INFRA.rglob("*.bicep"))

# Role definition ids used in infra/, with their built-in role names (Azure docs).
ROLE_NAMES = {
    "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
    "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
    "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
    "3913510d-42f4-4e42-8a64-420c390055eb": "Monitoring Metrics Publisher",
    "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": "Azure Service Bus Data Sender",
    "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0": "Azure Service Bus Data Receiver",
    "090c5cfd-751d-490a-894a-3ce6f1109419": "Azure Service Bus Data Owner",
    "00000000-0000-0000-0000-000000000002": "Cosmos DB Built-in Data Contributor",
    "00000000-0000-0000-0000-000000000001": "Cosmos DB Built-in Data Reader",
    "0ad04412-c4d5-4796-b79c-f76d14c8d402": "Durable Task Data Contributor",
    "d6a5505f-6ebb-45a4-896e-ac8274cfc0ac": "Durable Task Data Reader",
}
ROLE_ASSIGNMENT_TYPES = {"Microsoft.Authorization/roleAssignments",
                         "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments"}
GUID = re.compile(r"'([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})'")


def test_the_deployment_has_its_modules():
    names = {p.relative_to(INFRA).as_posix() for p in BICEP_FILES}
    assert names == {"main.bicep", "app/function-app.bicep", "app/servicebus.bicep",
                     "app/cosmos.bicep", "app/rbac.bicep", "app/durable-task-scheduler.bicep"}


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_bicep_parses(path):
    doc = parse_bicep(path)
    assert doc.get("resources") or doc.get("modules")


def test_registry_modules_are_pinned_verified_modules():
    modules = parse_bicep(INFRA / "main.bicep")["modules"]
    registry = {name: m["detail"] for name, m in modules.items() if m["type"] != "local"}
    assert registry, "main.bicep uses no Azure Verified Module"
    for name, detail in registry.items():
        assert detail["full"].startswith("public:avm/res/"), name
        assert re.fullmatch(r"\d+\.\d+\.\d+", detail["tag"]), f"{name}: unpinned {detail['tag']}"


def test_local_modules_exist():
    modules = parse_bicep(INFRA / "main.bicep")["modules"]
    for name, module in modules.items():
        if module["type"] == "local":
            assert (INFRA / module["detail"]["path"]).is_file(), name


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_role_assignments_are_named_by_scope_principal_and_role(path):
    for symbol, resource in parse_bicep(path).get("resources", {}).items():
        if resource["type"] not in ROLE_ASSIGNMENT_TYPES or resource.get("existing"):
            continue
        body = resource["config"]
        body = body.get("config", body)
        name = body["name"]["function"]
        assert name["type"] == "guid", symbol
        assert len([v for v in name["parameters"].values() if v is not None]) == 3, symbol


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_every_role_id_is_known_and_commented_with_its_name(path):
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines):
        for role_id in GUID.findall(line):
            assert role_id in ROLE_NAMES, f"{path.name}:{number + 1}: unknown role {role_id}"
            comment = lines[number - 1]
            assert comment.strip().startswith("//") and ROLE_NAMES[role_id] in comment, \
                f"{path.name}:{number + 1}: {role_id} needs a '// {ROLE_NAMES[role_id]}' above"


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_no_string_literal_shadows_a_symbol(path):
    # pycep does not tell 'orders' from orders; the evaluator reads a string naming a
    # symbol as a reference, so such a literal would silently change what the checks see.
    symbols = Scope(path).symbols()
    literals = set(re.findall(r"'([A-Za-z_]\w*)'", path.read_text()))
    assert not literals & symbols


def test_parameters_file_matches_main():
    assert parameter_file_problems(INFRA / "main.bicep", INFRA / "main.parameters.json") == set()


def test_parameters_check_reports_a_removed_required_parameter(infra_copy):
    path = infra_copy / "main.parameters.json"
    data = json.loads(path.read_text())
    del data["parameters"]["serviceUrls"]
    path.write_text(json.dumps(data))
    assert parameter_file_problems(infra_copy / "main.bicep", path) == {"serviceUrls"}


def test_parameters_check_reports_an_unknown_parameter(infra_copy):
    path = infra_copy / "main.parameters.json"
    data = json.loads(path.read_text())
    data["parameters"]["paymentApiUri"] = {"value": "https://typo.example.invalid"}
    path.write_text(json.dumps(data))
    assert parameter_file_problems(infra_copy / "main.bicep", path) == {"paymentApiUri"}
