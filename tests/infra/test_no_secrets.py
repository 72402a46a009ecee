"""Nothing secret is committed: no key, SAS, connection string with a key or private key."""

import subprocess

import pytest

from tests.infra.checks import REPO, Finding, committed_files, find_secrets
from tests.support.cosmos_server import EMULATOR_KEY

ALLOWED = {
    # The Cosmos DB emulator's published well-known key, used only against the local test
    # server (@vercel/cosmosdb-server) by tests/orders/stores and bench/scan. It lives in the local
    # host's tooling, which is never deployed; the deployed account has key auth disabled.
    EMULATOR_KEY: {"tests/support/cosmos_server.py"},
}


@pytest.fixture(scope="module")
def files():
    try:
        return committed_files(REPO)
    except (OSError, subprocess.CalledProcessError) as exc:  # no git, or not a work tree
        pytest.skip(f"git ls-files unavailable: {exc}")


def test_the_scan_covers_new_and_tracked_files(files):
    assert {"infra/main.bicep", "host.json", "tests/support/cosmos_server.py"} <= set(files)


def test_no_secret_in_committed_files(files):
    assert find_secrets(REPO, files, ALLOWED) == []


def test_the_emulator_key_is_where_the_allow_list_says(files):
    hits = [f for f in find_secrets(REPO, files) if f.kind == "base64 account key"]
    assert {f.path for f in hits} == set().union(*ALLOWED.values())


# ---------------------------------------------------------------- the scan can fail
def fake(*parts):
    # Built at run time so this file holds no secret-shaped string itself.
    return "".join(parts)


@pytest.mark.parametrize(("text", "kind"), [
    (fake("DefaultEndpointsProtocol=https;AccountName=x;Account", "Key=", "A" * 40, "=="),
     "storage account key"),
    (fake("Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccess", "Key=",
          "B" * 43, "="), "Service Bus / Event Hubs SAS key"),
    (fake("https://x.blob.core.windows.net/c?sv=2022-11-02&s", "ig=", "C" * 30, "%3D"),
     "SAS token signature"),
    (fake("-----BEGIN RSA PRIV", "ATE KEY-----"), "private key"),
    (fake("Instrumentation", "Key=", "12345678-1234-1234-1234-123456789012"),
     "App Insights instrumentation key"),
    (fake("AZURE_CLIENT_", "SECRET=", "x" * 34), "client secret"),
])
def test_each_secret_shape_is_found(tmp_path, text, kind):
    (tmp_path / "settings.txt").write_text(f"value = {text}\n")
    assert find_secrets(tmp_path, ["settings.txt"]) == [Finding("settings.txt", 1, kind)]


def test_the_emulator_key_is_refused_outside_the_allow_list(tmp_path):
    for rel in ("tests/support/cosmos_server.py", "orders/other.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f'KEY = "{EMULATOR_KEY}"\n')
    found = find_secrets(tmp_path, ["tests/support/cosmos_server.py", "orders/other.py"], ALLOWED)
    assert found == [Finding("orders/other.py", 1, "base64 account key")]


def test_npm_integrity_hashes_are_not_keys(tmp_path):
    digest = "sha512-" + "D" * 86 + "=="
    (tmp_path / "package-lock.json").write_text(f'"integrity": "{digest}"\n')
    assert find_secrets(tmp_path, ["package-lock.json"]) == []
