"""Durable entities (D10) through the SDK's own entity handler, in drain mode."""

import json
from pathlib import Path

import pytest

from devhost.app import invoke
from devhost.entities.worker import EntityWorker
from devhost.run.host import LocalHost
from devhost.taskhub.events import EventType

ENTITY_APP = Path(__file__).parent / "entity_app"


@pytest.fixture
def ehost(tmp_path, clock):
    h = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock, serve_http=False)
    yield h
    h.stop()


def start(host, name, value, instance_id):
    host.taskhub.create_instance(name, instance_id, json.dumps(value))
    return instance_id


def result(host, instance_id):
    inst = host.taskhub.get_instance(instance_id)
    return inst.runtime_status, json.loads(inst.output) if inst.output else None


def state(host, key, name="counter"):
    exists, text = host.taskhub.read_entity(name, key)
    return json.loads(text) if exists else None


def test_100_orchestrations_each_adding_1_leave_the_counter_at_exactly_100(ehost):
    for i in range(100):
        start(ehost, "add_one", "c100", f"add-{i:03d}")
    ehost.run_until_idle()
    assert state(ehost, "c100") == 100
    results = sorted(result(ehost, f"add-{i:03d}")[1] for i in range(100))
    assert results == list(range(1, 101)), "each call saw its own increment, none lost"
    assert ehost.taskhub.count_by_status() == {"Completed": 100}


def test_batches_respect_max_entity_operation_batch_size(ehost):
    worker = next(p for p in ehost.pollers if isinstance(p, EntityWorker))
    sdk_handler, sizes = worker.handlers["counter"], []

    def spy(context_json):
        sizes.append(len(json.loads(context_json)["batch"]))
        return sdk_handler(context_json)

    worker.handlers["counter"] = spy
    for i in range(25):
        start(ehost, "add_one", "batched", f"b-{i:02d}")
    ehost.run_until_idle()
    assert state(ehost, "batched") == 25
    assert ehost.config.durable.max_entity_batch == 10  # entity_app/host.json
    assert sizes == [10, 10, 5]


def test_call_and_response_history_has_the_extension_shapes(ehost):
    iid = start(ehost, "add_one", "h", "shape-1")
    ehost.run_until_idle()
    assert result(ehost, iid) == ("Completed", 1)
    history = ehost.taskhub.get_history(iid)
    sent = [e for e in history if e["EventType"] == EventType.EventSent]
    raised = [e for e in history if e["EventType"] == EventType.EventRaised]
    assert len(sent) == 1 and len(raised) == 1
    assert sent[0]["EventId"] == 0 and sent[0]["Name"] == "op"
    assert sent[0]["InstanceId"] == "@counter@h"
    request = json.loads(sent[0]["Input"])
    assert request["op"] == "add" and "signal" not in request
    assert request["input"] == '"1"', "the SDK's JSON text, serialised once more"
    assert (request["parent"], request["parentExecution"]) == (
        iid, ehost.taskhub.get_instance(iid).execution_id)
    assert raised[0]["Name"] == request["id"]
    assert json.loads(raised[0]["Input"]) == {"result": "1"}


def test_unknown_operation_fails_the_caller_with_the_entity_error(ehost):
    caught = start(ehost, "bad_operation", None, "bad-1")
    uncaught = start(ehost, "bad_operation_uncaught", None, "bad-2")
    ehost.run_until_idle()
    assert result(ehost, caught) == ("Completed",
                                     {"caught": "Counter has no operation 'multiply'"})
    status, output = result(ehost, uncaught)
    assert status == "Failed"
    assert "Counter has no operation 'multiply'" in output
    raised = [e for e in ehost.taskhub.get_history(caught)
              if e["EventType"] == EventType.EventRaised]
    assert json.loads(raised[0]["Input"]) == {
        "result": '"Counter has no operation \'multiply\'"', "exceptionType": "Error"}
    assert state(ehost, "bad") is None, "a failed first operation leaves no state"


def test_signals_from_an_orchestration_run_before_its_later_call(ehost):
    iid = start(ehost, "signal_then_get", "s", "sig-1")
    ehost.run_until_idle()
    assert result(ehost, iid) == ("Completed", 12)
    sent = [json.loads(e["Input"]) for e in ehost.taskhub.get_history(iid)
            if e["EventType"] == EventType.EventSent]
    assert [(r["op"], r.get("signal")) for r in sent] == [
        ("add", True), ("add", True), ("get", None)]


def test_signals_sent_before_continue_as_new_are_delivered(ehost):
    iid = start(ehost, "signal_and_continue", 1, "eternal-1")
    ehost.run_until_idle()
    assert result(ehost, iid) == ("Completed", 6)  # 1 + 2 + 3
    assert state(ehost, "eternal") == 6


def test_parallel_calls_to_one_entity_run_one_at_a_time(ehost):
    iid = start(ehost, "parallel_adds", "par", "par-1")
    ehost.run_until_idle()
    assert result(ehost, iid) == ("Completed", [1, 2, 3, 4, 5])


def test_calling_an_entity_without_a_function_fails_the_orchestration(ehost):
    iid = start(ehost, "unknown_entity", None, "nobody-1")
    ehost.run_until_idle()
    status, output = result(ehost, iid)
    assert status == "Failed"
    assert ("The function 'nobody' doesn't exist, is disabled, or is not an entity function. "
            "Additional info: The following are the known entity functions: "
            "'counter', 'journal'.") in output


def test_operations_run_in_arrival_order(ehost):
    for n in range(30):
        ehost.taskhub.signal_entity("journal", "order", "append", json.dumps(json.dumps(n)))
    ehost.run_until_idle()
    assert state(ehost, "order", "journal") == list(range(30))


def test_state_is_durable_across_a_new_host_on_the_same_task_hub(tmp_path, clock):
    first = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock, serve_http=False)
    for i in range(3):
        start(first, "add_one", "durable", f"d-{i}")
    first.run_until_idle()
    second = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock, serve_http=False)
    start(second, "add_one", "durable", "d-3")
    second.run_until_idle()
    assert result(second, "d-3") == ("Completed", 4)


def test_a_crashed_batch_runs_again_from_the_committed_state(ehost, clock):
    from datetime import timedelta

    for i in range(3):
        start(ehost, "add_one", "lease", f"l-{i}")
    while ehost.worker.run_episodes(8):
        pass
    worker = next(p for p in ehost.pollers if isinstance(p, EntityWorker))
    items = ehost.taskhub.claim_entities("dead-process", timedelta(seconds=30), 16, 50)
    assert [len(i.requests) for i in items] == [3]  # claimed, then the process "dies"
    assert worker.poll_once() == 0, "leased by the dead process"
    clock.advance(timedelta(seconds=31))
    ehost.run_until_idle()
    assert state(ehost, "lease") == 3
    assert sorted(result(ehost, f"l-{i}")[1] for i in range(3)) == [1, 2, 3]


def test_client_signal_and_read_through_the_sdk_and_http_api(tmp_path, clock):
    import azure.durable_functions as df

    host = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock)
    try:
        client = df.DurableOrchestrationClient(host.client_binding())
        entity = df.EntityId("Counter", "client")
        assert invoke.run(client.read_entity_state(entity)).entity_exists is False
        invoke.run(client.signal_entity(entity, "add", 41))
        invoke.run(client.signal_entity(entity, "add", 1))
        host.run_until_idle()
        response = invoke.run(client.read_entity_state(entity))
        assert (response.entity_exists, response.entity_state) == (True, 42)
    finally:
        host.stop()


def test_entity_http_api_routes(tmp_path, clock, caplog):
    import httpx

    host = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock)
    host.start_http()
    api = host.base_url + "/runtime/webhooks/durabletask/entities"
    try:
        with httpx.Client() as http:
            assert http.get(f"{api}/Counter/web").status_code == 404
            # The SDK's shape: a JSON string holding JSON text.
            assert http.post(f"{api}/Counter/web?op=add", json=json.dumps(5)).status_code == 202
            host.run_until_idle()
            got = http.get(f"{api}/counter/web")
            assert (got.status_code, got.json()) == (200, 5)
            # A bare JSON number reaches the entity as on Azure: get_input() fails on it.
            assert http.post(f"{api}/Counter/web?op=add", json=2).status_code == 202
            host.run_until_idle()
            assert http.get(f"{api}/Counter/web").json() == 5
            assert "is not a JSON string" in caplog.text
            refused = http.post(f"{api}/Nobody/web?op=add", json="1")
            assert refused.status_code == 400
            assert "'nobody' doesn't exist" in refused.json()["ExceptionMessage"]
            bad_json = http.post(f"{api}/Counter/web?op=add", content=b"{",
                                 headers={"content-type": "application/json"})
            assert bad_json.status_code == 400
            assert "Could not parse JSON content" in bad_json.json()["ExceptionMessage"]
            assert http.get(f"{api}/Counter/web?taskHub=Other").status_code == 400
            assert http.delete(f"{api}/Counter/web").status_code == 202
            host.run_until_idle()
            assert http.get(f"{api}/Counter/web").status_code == 404
    finally:
        host.stop()


def test_an_app_http_function_signals_and_reads_with_the_durable_client(tmp_path, clock):
    import httpx

    host = LocalHost(ENTITY_APP, tmp_path / "data", clock=clock)
    host.start_http()
    try:
        with httpx.Client(timeout=30) as http:
            assert http.post(f"{host.base_url}/api/counter/app", json=3).status_code == 202
            host.run_until_idle()
            got = http.get(f"{host.base_url}/api/counter/app").json()
            assert got == {"exists": True, "state": 3}
    finally:
        host.stop()
