"""Fixtures of the infrastructure checks: the app's trigger metadata and a copy of infra/."""

import shutil

import pytest

from devhost.app.loader import import_app
from tests.infra.checks import INFRA, LOCAL_SETTINGS, REPO, function_metadata, local_settings

CLIENTS = [
    {"clientId": "Acme-1", "principalId": "11111111-2222-3333-4444-555555555555",
     "principalType": "ServicePrincipal"},
    {"clientId": "globex", "principalId": "66666666-7777-8888-9999-000000000000",
     "principalType": "User"},
]
"""The Bicep ``clients`` parameter of the checks; ``ORDER_CLIENTS`` is their ids, lower case,
as main.bicep sets it."""

ORDER_CLIENTS = ",".join(c["clientId"].lower() for c in CLIENTS)


@pytest.fixture(scope="session")
def triggers():
    """Trigger metadata of function_app, imported as the host does: binding settings
    (%STARTER_SCHEDULE%, ...) from local.settings.json in the environment, and
    ``ORDER_CLIENTS`` as the Bicep sets it for :data:`CLIENTS`."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in local_settings(LOCAL_SETTINGS).items():
            mp.setenv(name, value)
        mp.setenv("ORDER_CLIENTS", ORDER_CLIENTS)
        app = import_app(REPO)
        return function_metadata(app)


@pytest.fixture
def infra_copy(tmp_path):
    """A writable copy of infra/ (Bicep, parameters, queues.json), with host.json beside it
    as in the repository (main.bicep reads the task hub name from it)."""
    target = tmp_path / "infra"
    shutil.copytree(INFRA, target)
    shutil.copy(REPO / "host.json", tmp_path / "host.json")
    return target


def remove_line(path, needle):
    """Delete the one line of ``path`` containing ``needle`` (fails if not exactly one)."""
    lines = path.read_text().splitlines(keepends=True)
    hits = [line for line in lines if needle in line]
    assert len(hits) == 1, f"{path.name}: {len(hits)} lines contain {needle!r}"
    path.write_text("".join(line for line in lines if needle not in line))


def replace_once(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name}: {old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new))
