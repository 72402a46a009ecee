"""host.json settings as Azure reads them: versions, versioning strategies, %Setting%."""

import json
import logging
import os
from datetime import timedelta

import azure.durable_functions as df
import httpx
import pytest

from azurekit.app_settings import APP_SETTINGS_FILE
from devhost.app import invoke
from devhost.app.loader import AppLoadError
from devhost.orchestration.versioning import MISMATCH_MESSAGE, compare_versions
from devhost.run.host import LocalHost
from devhost.run.runtime import build_host
from devhost.taskhub.events import EventType
from tests.devhost.apps import write_app

APP = '''
import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.orchestration_trigger(context_name="context")
def versioned(context):
    child = yield context.call_sub_orchestrator("child", None)
    pinned = yield context.call_sub_orchestrator("child", None, version="0.5")
    return {"version": context.version, "child": child, "pinned": pinned}


@app.orchestration_trigger(context_name="context")
def child(context):
    return context.version


@app.route(route="start/{version}")
@app.durable_client_input(client_name="client")
async def start(req: func.HttpRequest, client):
    version = req.route_params["version"]
    instance_id = await client.start_new("child", None, None,
                                         version=None if version == "none" else version)
    return func.HttpResponse(instance_id)
'''




def durable(**settings):
    return {"version": "2.0", "extensions": {"durableTask": settings}}


def make_host(tmp_path, clock, *, settings=None, **durable_settings):
    app_dir = write_app(tmp_path / "app", {"function_app.py": APP},
                        host_json=durable(**durable_settings), settings=settings)
    return LocalHost(app_dir, tmp_path / "data", clock=clock)


def outcome(host, instance_id):
    record = host.taskhub.get_instance(instance_id)
    return record.runtime_status, json.loads(record.output) if record.output else None


def test_default_version_goes_to_instances_and_sub_orchestrations(tmp_path, clock):
    host = make_host(tmp_path, clock, defaultVersion="1.0")
    host.taskhub.create_instance("versioned", "v-1", None)
    host.run_until_idle()
    assert outcome(host, "v-1") == ("Completed",
                                    {"version": "1.0", "child": "1.0", "pinned": "0.5"})
    started = host.taskhub.get_history("v-1")[1]
    assert (started["EventType"], started["Version"]) == (EventType.ExecutionStarted, "1.0")


def test_client_and_http_api_start_with_a_version(tmp_path, clock):
    host = make_host(tmp_path, clock, defaultVersion="1.0")
    host.start_http()
    try:
        client = df.DurableOrchestrationClient(host.client_binding())
        by_sdk = invoke.run(client.start_new("child", "sdk-1", None, version="0.9"))
        by_api = httpx.post(f"{host.base_url}/runtime/webhooks/durabletask/orchestrators/"
                            "child/api-1?version=0.8").json()["id"]
        by_app = httpx.post(f"{host.base_url}/api/start/none").text
        host.run_until_idle()
    finally:
        host.stop()
    assert outcome(host, by_sdk) == ("Completed", "0.9")
    assert outcome(host, by_api) == ("Completed", "0.8")
    assert outcome(host, by_app) == ("Completed", "1.0")


def test_a_newer_instance_is_rejected_and_left_as_it_is(tmp_path, clock, caplog):
    host = make_host(tmp_path, clock, defaultVersion="1.0")
    host.taskhub.create_instance("child", "newer", None, version="2.0")
    caplog.set_level(logging.WARNING)
    host.run_until_idle(advance_clock=True, until=clock.now() + timedelta(seconds=35))
    record = host.taskhub.get_instance("newer")
    assert record.runtime_status == "Pending" and host.taskhub.get_history("newer") == []
    rejections = [r for r in caplog.records if "'newer' has version '2.0'" in r.message]
    assert len(rejections) == 4, "tried at 0, 10, 20 and 30 s"
    assert "CurrentOrOlder" in rejections[0].message


def test_fail_strategy_fails_a_mismatched_instance(tmp_path, clock):
    host = make_host(tmp_path, clock, defaultVersion="1.0", versionMatchStrategy="Strict",
                     versionFailureStrategy="Fail")
    host.taskhub.create_instance("child", "older", None, version="0.9")
    host.run_until_idle()
    assert outcome(host, "older") == ("Failed", MISMATCH_MESSAGE)
    completed = host.taskhub.get_history("older")[-1]
    assert completed["FailureDetails"]["ErrorType"] == "VersionMismatch"


def test_match_strategy_none_runs_every_version(tmp_path, clock):
    host = make_host(tmp_path, clock, defaultVersion="1.0", versionMatchStrategy="none")
    host.taskhub.create_instance("child", "any", None, version="7.0")
    host.run_until_idle()
    assert outcome(host, "any") == ("Completed", "7.0")


@pytest.mark.parametrize(("setting", "value"), [("versionMatchStrategy", "Newest"),
                                                ("versionFailureStrategy", "Retry")])
def test_an_unknown_strategy_stops_the_start(tmp_path, clock, setting, value):
    with pytest.raises(AppLoadError, match=f"extensions.durableTask.{setting} '{value}' is "
                                           "not supported; use one of"):
        make_host(tmp_path, clock, **{setting: value})


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("1.0", "1.0", 0), ("1.10", "1.9", 1), ("1.0.0", "1.0", 1), ("", "0.1", -1),
    (None, "", 0), ("10", "9", -1), ("v2-Release", "V2-release", 0),
    ("2025-01-02", "2025-01-10", -1),
])
def test_versions_compare_as_dtfx_compares_them(a, b, expected):
    assert compare_versions(a, b) == expected


def test_hub_name_setting_reference_is_resolved(tmp_path, clock):
    host = make_host(tmp_path, clock, hubName="%TASKHUB_NAME%",
                     settings={"TASKHUB_NAME": "default"})
    assert host.taskhub.name == "default"
    host.start_http()
    try:
        answer = httpx.get(f"{host.base_url}/runtime/webhooks/durabletask/instances/x"
                           "?taskHub=default")
    finally:
        host.stop()
    assert answer.status_code == 404  # the task hub is served; the instance does not exist


def test_hub_name_reference_to_an_unset_setting_stops_the_start(tmp_path, clock):
    with pytest.raises(AppLoadError, match="hubName '%MISSING_HUB%': app setting "
                                           "'MISSING_HUB' is not set"):
        make_host(tmp_path, clock, hubName="%MISSING_HUB%")


def test_app_setting_overrides_host_json_as_the_functions_host_does(tmp_path, clock):
    host = make_host(tmp_path, clock, hubName="FromHostJson", settings={
        "AzureFunctionsJobHost__extensions__durableTask__hubName": "FromSetting"})
    assert host.taskhub.name == "FromSetting"


def test_durable_client_task_hub_reference_is_resolved_and_checked(tmp_path, clock):
    client_app = APP.replace('@app.durable_client_input(client_name="client")',
                             '@app.durable_client_input(client_name="client", '
                             'task_hub="%CLIENT_HUB%")')
    app_dir = write_app(tmp_path / "app", {"function_app.py": client_app},
                        host_json=durable(hubName="Orders"), settings={"CLIENT_HUB": "Orders"})
    assert LocalHost(app_dir, tmp_path / "data", clock=clock).taskhub.name == "Orders"
    os.environ["CLIENT_HUB"] = "Elsewhere"
    with pytest.raises(AppLoadError, match="function 'start': its durableClient binding names "
                                           "task hub 'Elsewhere', but the local host serves "
                                           "only 'Orders'"):
        LocalHost(app_dir, tmp_path / "data2", clock=clock)


def test_the_host_records_the_settings_in_force_without_secrets(tmp_path, clock):
    app_dir = write_app(tmp_path / "app", {"function_app.py": APP}, host_json=durable(),
                        settings={"MAX_PROCESSING": "60", "ORDER_CLIENTS": "shop-a",
                                  "AzureWebJobsStorage": "UseDevelopmentStorage=true",
                                  "APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=k"})
    os.environ["MAX_PROCESSING"] = "200"  # the environment overrides the file, as under func
    host = build_host(app_dir, tmp_path / "data", clock=clock)
    recorded = json.loads((tmp_path / "data" / APP_SETTINGS_FILE).read_text())
    assert recorded == {"FUNCTIONS_WORKER_RUNTIME": "python", "MAX_PROCESSING": "200",
                        "ORDER_CLIENTS": "shop-a"}
    host.stop()
