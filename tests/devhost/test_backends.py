"""The local host knows which Durable Functions backend an app's settings select.

One host.json serves both backends of the deployment: the Bicep's ``durableBackend``
writes ``AzureFunctionsJobHost__extensions__durableTask__storageProvider__*`` app settings
for the Durable Task Scheduler and none for Azure Storage. Under the local host's host.json
reader (the override rules of :mod:`devhost.app.host_config`) each set resolves to the
provider the extension would start, and the scheduler's limits apply: a 1.1 MB activity
output fails (the scheduler's 1 MB per payload), under Azure Storage it does not (large
messages go to blobs).
"""

import json
import logging

import pytest

from devhost.app.backends import AZURE_MANAGED, SCHEDULER_MAX_PAYLOAD_BYTES, backend_of
from devhost.app.host_config import load_host_config
from devhost.app.loader import AppLoadError
from devhost.run.host import LocalHost
from tests.devhost.apps import write_app
from tests.infra.checks import REPO, bicep_app_settings

OVERRIDE = "AzureFunctionsJobHost__"
SCHEDULER = {"durableBackend": "DurableTaskScheduler"}
CONNECTION = "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"
LOCAL_CONNECTION = "Endpoint=http://localhost:8080;Authentication=None"
"""The scheduler emulator's connection string (Learn: Durable Task Scheduler emulator)."""

APP = '''
import azure.durable_functions as df

app = df.DFApp()


@app.orchestration_trigger(context_name="context")
def fetch(context):
    size = context.get_input()
    try:
        data = yield context.call_activity("load", size)
    except Exception as exc:
        return {"failed": str(exc)}
    return {"length": len(data)}


@app.activity_trigger(input_name="size")
def load(size: int) -> str:
    return "x" * size
'''


def deployed_overrides(params):
    """The host.json overrides among the app settings the Bicep writes for ``params``."""
    return {k: v for k, v in bicep_app_settings(params=params).items() if k.startswith(OVERRIDE)}


def settings_for(backend_params):
    env = deployed_overrides(backend_params)
    if env:
        env[CONNECTION] = LOCAL_CONNECTION
    return env


@pytest.mark.parametrize(("params", "provider", "max_payload"), [
    ({}, {"maxqueuepollinginterval": "00:00:05"}, None),
    (SCHEDULER, {"maxqueuepollinginterval": "00:00:05", "type": AZURE_MANAGED,
                 "connectionstringname": CONNECTION}, SCHEDULER_MAX_PAYLOAD_BYTES),
], ids=["AzureStorage", "DurableTaskScheduler"])
def test_host_json_and_each_backends_settings_resolve_to_its_provider(params, provider,
                                                                      max_payload):
    env = settings_for(params)
    config = load_host_config(REPO, environ=env)
    assert config.get("extensions", "durableTask", "storageProvider") == provider
    assert config.durable.hub_name == "OrdersTaskHub"  # the task hub the Bicep creates
    backend = backend_of(config, env)
    assert backend.max_payload_bytes == max_payload
    assert backend.check_hub_name(config.durable.hub_name) == "OrdersTaskHub"


def make_host(tmp_path, clock, monkeypatch, params):
    for name, value in settings_for(params).items():
        monkeypatch.setenv(name, value)
    app_dir = write_app(tmp_path / "app", {"function_app.py": APP},
                        host_json={"version": "2.0",
                                   "extensions": {"durableTask": {"hubName": "FetchHub"}}})
    return LocalHost(app_dir, tmp_path / "data", clock=clock, serve_http=False)


def run(host, size):
    host.taskhub.create_instance("fetch", "fetch-1", json.dumps(size))
    host.run_until_idle()
    record = host.taskhub.get_instance("fetch-1")
    return record.runtime_status, json.loads(record.output)


ONE_POINT_ONE_MB = 1_100_000


def test_a_1_1_mb_activity_output_fails_under_the_scheduler(tmp_path, clock, monkeypatch):
    host = make_host(tmp_path, clock, monkeypatch, SCHEDULER)
    try:
        status, output = run(host, ONE_POINT_ONE_MB)
    finally:
        host.stop()
    assert status == "Completed"
    assert "Activity function 'load' failed" in output["failed"]
    assert "1,100,002 bytes" in output["failed"]  # the JSON string, quotes included
    assert "1,048,576 bytes (1 MB)" in output["failed"]


def test_the_same_output_completes_under_azure_storage(tmp_path, clock, monkeypatch):
    host = make_host(tmp_path, clock, monkeypatch, {})
    try:
        assert run(host, ONE_POINT_ONE_MB) == ("Completed", {"length": ONE_POINT_ONE_MB})
    finally:
        host.stop()


def test_an_output_at_the_limit_passes_under_the_scheduler(tmp_path, clock, monkeypatch):
    host = make_host(tmp_path, clock, monkeypatch, SCHEDULER)
    size = SCHEDULER_MAX_PAYLOAD_BYTES - 2  # plus the JSON string's quotes: exactly 1 MB
    try:
        assert run(host, size) == ("Completed", {"length": size})
    finally:
        host.stop()


@pytest.mark.parametrize(("provider", "name", "refused"), [
    ("AzureStorage", "orders-hub", True),  # letters and digits only
    (AZURE_MANAGED, "orders-hub", False),  # hyphens allowed
    (AZURE_MANAGED, "ab", True),  # 3 to 64
    (AZURE_MANAGED, "h" * 64, False),
    (AZURE_MANAGED, "h" * 65, True),
    ("AzureStorage", "h" * 51, True),
])
def test_task_hub_names_follow_the_selected_backend(tmp_path, provider, name, refused):
    env = {f"{OVERRIDE}extensions__durableTask__storageProvider__type": provider,
           f"{OVERRIDE}extensions__durableTask__hubName": name}
    write_app(tmp_path, {}, host_json={"version": "2.0"})
    config = load_host_config(tmp_path, environ=env)
    backend = backend_of(config, env)
    if refused:
        with pytest.raises(AppLoadError, match="Task hub name"):
            backend.check_hub_name(config.durable.hub_name)
    else:
        assert backend.check_hub_name(config.durable.hub_name) == name


def test_start_up_warns_where_the_scheduler_differs(tmp_path, caplog):
    env = {f"{OVERRIDE}extensions__durableTask__storageProvider__type": AZURE_MANAGED}
    write_app(tmp_path, {}, host_json={"version": "2.0"})
    with caplog.at_level(logging.WARNING, logger="devhost"):
        backend_of(load_host_config(tmp_path, environ=env), env)
    text = caplog.text
    assert f"'{CONNECTION}' (connectionStringName) is not set" in text
    assert "over 1 MB fail" in text and "maxQueuePollingInterval" in text
    assert "drain the old task hub" in text


def test_azure_storage_starts_without_a_backend_warning(tmp_path, caplog):
    write_app(tmp_path, {}, host_json={"version": "2.0"})
    with caplog.at_level(logging.WARNING, logger="devhost"):
        backend_of(load_host_config(tmp_path, environ={}), {})
    assert "storage provider" not in caplog.text
