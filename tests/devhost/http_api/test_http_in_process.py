"""The host's own durable clients are answered in the process, with no HTTP at all."""

from azure.durable_functions import DurableOrchestrationClient

from devhost.http_api import client_binding_json, create_http_app, in_process
from devhost.run.host import free_port
from tests.devhost.http_api.helpers import run


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
