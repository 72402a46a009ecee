"""The deployed versions are the tested ones: one pin, in every file that names it.

``make test`` installs ``pyproject.toml``'s dependencies; the remote build of the Function
App installs ``requirements.txt``; the Functions host picks the newest extension bundle in
``host.json``'s range. The code reads private members of the Durable Functions client and
orchestration context (``scheduler/durable_client.py``, ``ops/instance_pages.py``), so
azure-functions-durable is pinned exactly, to the version the tests ran with; orchestration
versioning (``defaultVersion`` in host.json, X6) needs azure-functions-durable 1.5.0 or
later and an extension bundle with Durable Functions versioning, 4.30.0 or later, and
with the Durable Task Scheduler provider, 4.32.0 or later (docs/deploy.md, table
"host.json").
"""

import json
import tomllib
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from tests.infra.checks import REPO

DEPLOY_DOC = REPO / "docs" / "deploy.md"
EXACT = ("azure-functions", "azure-functions-durable", "azure-monitor-opentelemetry")
"""Packages pinned to one version (private members read, or behaviour checked by tests)."""
VERSIONING_BUNDLE = Version("4.30.0")
SCHEDULER_BUNDLE = Version("4.32.0")
"""The Durable Task Scheduler provider (``storageProvider.type: azureManaged``) for
non-.NET apps needs bundle 4.32.0 or later (Learn: "Develop with Durable Task Scheduler",
Durable Functions prerequisites)."""
VERSIONING_SDK = Version("1.5.0")


def requirements_txt(path=REPO / "requirements.txt"):
    lines = [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()]
    return {r.name: r.specifier for r in map(Requirement, filter(None, lines))}


def pyproject_dependencies(path=REPO / "pyproject.toml"):
    deps = tomllib.loads(path.read_text())["project"]["dependencies"]
    return {r.name: r.specifier for r in map(Requirement, deps)}


def bundle_range(path=REPO / "host.json"):
    """host.json's bundle range ``[low, high)`` as (low, high)."""
    text = json.loads(path.read_text())["extensionBundle"]["version"]
    assert text.startswith("[") and text.endswith(")"), text
    low, high = (part.strip() for part in text[1:-1].split(","))
    return Version(low), Version(high), text


def test_every_deployed_requirement_is_pinned_alike_in_pyproject():
    deployed, tested = requirements_txt(), pyproject_dependencies()
    assert {name: deployed[name] for name in deployed} == \
        {name: tested.get(name) for name in deployed}


def test_exact_pins_are_the_installed_versions_the_tests_run():
    deployed = requirements_txt()
    for name in EXACT:
        (spec,) = deployed[name]
        assert spec.operator == "==", f"{name}: pin one version, got {deployed[name]}"
        assert spec.version == version(name), f"{name}: pinned {spec.version}, " \
                                              f"tests run {version(name)}"


def test_the_durable_sdk_pin_supports_orchestration_versioning():
    (spec,) = requirements_txt()["azure-functions-durable"]
    assert Version(spec.version) >= VERSIONING_SDK


def test_the_bundle_range_starts_where_versioning_is_supported_and_stays_in_major_4():
    low, high, _ = bundle_range()
    assert low >= VERSIONING_BUNDLE
    # One host.json serves both backends (infra/main.bicep, durableBackend).
    assert low >= SCHEDULER_BUNDLE
    assert high == Version("5.0.0")


def test_deploy_md_states_the_bundle_range_and_the_sdk_pin():
    text = DEPLOY_DOC.read_text()
    _, _, literal = bundle_range()
    assert f"| `extensionBundle.version` | `{literal}` |" in text
    (spec,) = requirements_txt()["azure-functions-durable"]
    assert f"azure-functions-durable=={spec.version}" in text


def test_the_checks_see_a_drifting_pin_and_a_wildcard_bundle(tmp_path):
    drifted = tmp_path / "requirements.txt"
    drifted.write_text("azure-functions-durable>=1.2.10,<2  # a range\n")
    (spec, *more) = requirements_txt(drifted)["azure-functions-durable"]
    assert (spec.operator, more != []) != ("==", False)
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"extensionBundle": {"version": "[4.*, 5.0.0)"}}))
    with pytest.raises(InvalidVersion):
        bundle_range(host)
