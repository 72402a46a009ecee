"""An activity with a ``durableClient`` input binding gets the host's client, as on Azure.

The client binding pairs with any trigger (the extension's ``DurableClientAttribute``), so
an activity may start other instances or raise their events. (The SDK's
``durable_client_input`` wraps the function in a coroutine that awaits it, so only an
``async def`` activity takes a client, on Azure as here.)
"""

import json

import pytest

from tests.devhost.apps import write_app

APP = '''
import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.orchestration_trigger(context_name="context")
def parent(context):
    started = yield context.call_activity(context.get_input(), context.instance_id + "-child")
    return started


@app.orchestration_trigger(context_name="context")
def child(context):
    return "child of " + str(context.get_input())


@app.activity_trigger(input_name="iid")
@app.durable_client_input(client_name="client")
async def start_async(iid: str, client):
    return await client.start_new("child", iid, "async")


@app.orchestration_trigger(context_name="context")
def waiter(context):
    return (yield context.wait_for_external_event("go"))


@app.activity_trigger(input_name="iid")
@app.durable_client_input(client_name="client")
async def signal_waiter(iid: str, client):
    await client.raise_event("waiter-1", "go", {"from": iid})
    return "sent"
'''


@pytest.fixture
def host(durable_host_factory, tmp_path):
    return durable_host_factory(write_app(tmp_path / "app", {"function_app.py": APP}))


def test_an_async_activity_starts_another_instance_through_its_client(host):
    host.start("parent", "start_async", instance_id="p1")
    host.run_until_idle()
    assert host.status("p1")["output"] == "p1-child"
    assert host.status("p1-child")["runtimeStatus"] == "Completed"
    assert host.status("p1-child")["output"] == "child of async"


def test_an_activity_raises_an_event_to_another_instance_through_its_client(host):
    host.start("waiter", instance_id="waiter-1")
    host.run_until_idle()
    host.start("parent", "signal_waiter", instance_id="p2")
    host.run_until_idle()
    assert host.status("p2")["output"] == "sent"
    assert host.status("waiter-1")["runtimeStatus"] == "Completed"
    # The SDK's raise_event sends the value's JSON text; the orchestrator returns it as is.
    assert json.loads(host.status("waiter-1")["output"]) == {"from": "p2-child"}
