"""The host's own durable clients are answered in the process, with no HTTP at all."""

import httpx
import pytest
from azure.durable_functions import DurableOrchestrationClient

from devhost.http_api import client_binding_json, create_http_app, in_process
from devhost.run.host import free_port
from tests.devhost.http_api.helpers import InProcessTransport, run


@pytest.fixture
def api_path():
    """These tests take both paths themselves."""
    return "http"


def test_a_registered_base_url_is_answered_with_nothing_listening(taskhub):
    # Nothing listens on this port: an answer can only come from this process.
    base_url = f"http://127.0.0.1:{free_port()}"
    woken = []
    api = in_process.InProcessApi(create_http_app(taskhub, base_url=base_url,
                                                  on_instance_work=woken.append), base_url)
    in_process.register(api)
    try:
        client = DurableOrchestrationClient(client_binding_json(taskhub.name, base_url))
        assert run(client.start_new("Hello", "ip-1", {"n": 1})) == "ip-1"
        status = run(client.get_status("ip-1"))
        assert (status.runtime_status.value, status.input_) == ("Pending", '{"n": 1}')
        assert run(client.get_status("ghost")).message is not None  # 404 answered
        assert woken == ["ip-1"]
    finally:
        in_process.unregister(api)
    assert in_process.api_for(base_url + "/runtime/webhooks/durabletask/instances") is None


def test_only_urls_under_the_webhook_base_are_served(taskhub):
    base_url = "http://127.0.0.1:7071"
    api = in_process.InProcessApi(create_http_app(taskhub, base_url=base_url), base_url)
    assert api.serves(base_url + "/runtime/webhooks/durabletask")
    assert api.serves(base_url + "/runtime/webhooks/durabletask/instances/x?taskHub=h")
    assert not api.serves(base_url + "/runtime/webhooks/durabletaskx")
    assert not api.serves(base_url + "/api/orders")
    assert not api.serves("http://127.0.0.1:7072/runtime/webhooks/durabletask/instances")


READS = [
    ("GET", "/instances/same-1?taskHub=LocalHub&connection=Storage", None),
    ("GET", "/instances/same-1?showHistory=true&showInput=false", None),
    ("GET", "/instances/ghost", None),
    ("GET", "/instances?top=1", None),
    ("GET", "/instances/?runtimeStatus=Nope", None),
    ("GET", "/instances/a%2Fb", None),
    ("GET", "/nowhere", None),
    ("DELETE", "/instances/same-1/raiseEvent/E", None),
    ("POST", "/instances/ghost/raiseEvent/E", b"1"),
    ("POST", "/instances/same-1/explode", None),
    ("POST", "/orchestrators/Hello/new-1?unknown=1", b"{}"),
    ("POST", "/orchestrators/Hello/new-2", b"{not json"),
    ("POST", "/instances/ghost/restart", None),
]
"""Requests that change nothing, so both paths meet the same task hub."""


@pytest.mark.parametrize(("method", "path", "body"), READS)
def test_both_paths_give_the_same_status_headers_and_body(server, method, path, body):
    run(server.client().start_new("Hello", "same-1", {"n": 1}))
    run(server.client().start_new("Hello", "same-2", None))
    headers = {"content-type": "application/json"} if body is not None else {}
    with httpx.Client(timeout=30) as http:
        over_http = http.request(method, server.api + path, content=body, headers=headers)
    in_process.register(server.in_process_api)
    try:
        with httpx.Client(transport=InProcessTransport(lambda: server.in_process_api),
                          timeout=30) as local:
            answered = local.request(method, server.api + path, content=body, headers=headers)
    finally:
        in_process.unregister(server.in_process_api)

    def shape(response):
        kept = {k: v for k, v in response.headers.items() if k not in ("date", "server")}
        return response.status_code, kept, response.content

    assert shape(answered) == shape(over_http)
