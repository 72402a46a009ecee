import json

import pytest
from azure.durable_functions import DurableOrchestrationClient
from azure.durable_functions.models.DurableOrchestrationBindings import (
    DurableOrchestrationBindings,
)

from devhost.http_api import client_binding_json, create_http_app, rpc_base_url

BASE = "http://127.0.0.1:7071"
API = BASE + "/runtime/webhooks/durabletask"
HUB = "taskHub=LocalHub&connection=Storage"


def test_binding_json_has_the_keys_of_the_functions_host():
    value = json.loads(client_binding_json("LocalHub", BASE + "/"))
    assert value == {
        "taskHubName": "LocalHub",
        "creationUrls": {
            "createNewInstancePostUri": f"{API}/orchestrators/{{functionName}}[/{{instanceId}}]",
            "createAndWaitOnNewInstancePostUri":
                f"{API}/orchestrators/{{functionName}}[/{{instanceId}}]"
                "?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}",
        },
        "managementUrls": {
            "id": "INSTANCEID",
            "statusQueryGetUri": f"{API}/instances/INSTANCEID?{HUB}",
            "sendEventPostUri": f"{API}/instances/INSTANCEID/raiseEvent/{{eventName}}?{HUB}",
            "terminatePostUri": f"{API}/instances/INSTANCEID/terminate?reason={{text}}&{HUB}",
            "rewindPostUri": f"{API}/instances/INSTANCEID/rewind?reason={{text}}&{HUB}",
            "purgeHistoryDeleteUri": f"{API}/instances/INSTANCEID?{HUB}",
            "restartPostUri": f"{API}/instances/INSTANCEID/restart?{HUB}",
            "suspendPostUri": f"{API}/instances/INSTANCEID/suspend?reason={{text}}&{HUB}",
            "resumePostUri": f"{API}/instances/INSTANCEID/resume?reason={{text}}&{HUB}",
        },
        "baseUrl": API,
        "requiredQueryStringParameters": "",
        "rpcBaseUrl": API + "/",
        "httpBaseUrl": API,
        "maxGrpcMessageSizeInBytes": 0,
        "grpcHttpClientTimeout": "00:01:40",
    }


def test_the_sdk_reads_the_binding():
    bindings = DurableOrchestrationBindings.from_json(client_binding_json("LocalHub", BASE))
    assert bindings.task_hub_name == "LocalHub"
    assert bindings.rpc_base_url == rpc_base_url(BASE) == API + "/"
    client = DurableOrchestrationClient(client_binding_json("LocalHub", BASE))
    payload = client.create_http_management_payload("order-9")
    assert payload["id"] == "order-9"
    assert payload["statusQueryGetUri"] == f"{API}/instances/order-9?{HUB}"
    assert payload["resumePostUri"] == f"{API}/instances/order-9/resume?reason={{text}}&{HUB}"


def test_task_hub_name_is_url_encoded_in_queries():
    value = json.loads(client_binding_json("Hub A&B", BASE))
    assert value["managementUrls"]["restartPostUri"].endswith(
        "restart?taskHub=Hub%20A%26B&connection=Storage")


@pytest.mark.parametrize("bad", ["127.0.0.1:7071", "ftp://host", "http://", "http://h?x=1"])
def test_bad_base_url_is_refused(bad, taskhub):
    with pytest.raises(ValueError, match="base_url: "):
        client_binding_json("LocalHub", bad)
    with pytest.raises(ValueError, match="base_url: "):
        create_http_app(taskhub, base_url=bad)


def test_empty_task_hub_name_is_refused():
    with pytest.raises(ValueError, match="task_hub_name: must not be empty"):
        client_binding_json("", BASE)
