import json
import logging
import re
from urllib.parse import quote

import pytest

from tests.devhost.http_api.helpers import finish, queued_events, run

INVALID_IDS = ["", "x" * 101, "@x", "a/b", "a\\b", "a#b", "a?b", "a\x01b"]

CHECK_STATUS_KEYS = {"id", "statusQueryGetUri", "sendEventPostUri", "terminatePostUri",
                     "purgeHistoryDeleteUri", "restartPostUri", "suspendPostUri",
                     "resumePostUri"}


def test_sdk_start_new_generates_a_uuid_hex_id_and_stores_the_input(server):
    client = server.client()
    instance_id = run(client.start_new("Hello", client_input={"city": "Tokyo", "n": 2}))
    assert re.fullmatch(r"[0-9a-f]{32}", instance_id)
    record = server.taskhub.get_instance(instance_id)
    assert record.name == "Hello"
    assert record.runtime_status == "Pending"
    # Stored as the extension stores the SDK's body: a JSON string holding the SDK's text
    # (HttpApiHandler reads the body as a JSON value, DTFx serialises that value).
    assert json.loads(record.input) == '{"city": "Tokyo", "n": 2}'
    started = queued_events(server.taskhub, instance_id)[0]
    assert started["Name"] == "Hello"
    assert started["Input"] == record.input
    assert server.woken == [instance_id]


def test_status_input_of_an_sdk_start_is_the_json_text_as_on_azure(server):
    # azure-functions-durable-python#195 shows Azure's status: '_input' is a str holding
    # the JSON text, so status.input_["city"] fails deployed; it fails here too.
    client = server.client()
    instance_id = run(client.start_new("Hello", client_input={"city": "Tokyo"}))
    status = run(client.get_status(instance_id))
    assert status.input_ == '{"city": "Tokyo"}'
    with pytest.raises(TypeError):
        status.input_["city"]  # noqa: B018 - what breaks on Azure


def test_the_orchestrator_gets_the_input_value_from_the_stored_text(server):
    # The extension hands the orchestrator its input as a JSON value (GetInputAsJson): a
    # string, which the SDK's get_input() parses.
    from devhost.orchestration.episode import Episode
    from devhost.taskhub.store import OrchestrationWorkItem

    instance_id = run(server.client().start_new("Hello", client_input={"city": "Oslo"}))
    item = OrchestrationWorkItem(server.taskhub.get_instance(instance_id), [],
                                 [], "test")
    episode = Episode(item, None, server.clock.now())
    episode.new_events = queued_events(server.taskhub, instance_id)
    assert json.loads(episode.context_json())["input"] == '{"city": "Oslo"}'


def test_sdk_start_new_with_an_id_and_a_version(server):
    client = server.client()
    assert run(client.start_new("Hello", "order-7-attempt-1", "x", version="2.0")) == \
        "order-7-attempt-1"
    record = server.taskhub.get_instance("order-7-attempt-1")
    assert (json.loads(record.input), record.version) == ('"x"', "2.0")


def test_sdk_start_new_without_input_stores_none(server):
    instance_id = run(server.client().start_new("Hello", "no-input"))
    assert server.taskhub.get_instance(instance_id).input is None


@pytest.mark.parametrize("bad", ["", "x" * 101, "@x", "a/b", "a\\b", "a\x01b", "a?b",
                                 "a?b=c"])
def test_sdk_start_new_with_invalid_id_is_refused_and_nothing_is_written(server, bad):
    with pytest.raises(Exception, match="instanceId"):
        run(server.client().start_new("Hello", bad, {"x": 1}))
    assert server.taskhub.query() == ([], None)
    assert server.woken == []


@pytest.mark.parametrize("bad", INVALID_IDS)
def test_http_start_with_invalid_id_is_400_naming_the_field(server, bad, http):
    url = f"{server.api}/orchestrators/Hello/{quote(bad, safe='')}"
    response = http.post(url, json={"x": 1})
    assert response.status_code == 400
    body = response.json()
    assert body["ExceptionMessage"].startswith("instanceId: ")
    assert server.taskhub.query() == ([], None)
    assert server.woken == []


def test_http_start_returns_the_documented_check_status_payload(server, http):
    response = http.post(f"{server.api}/orchestrators/Hello/order%201", json={"city": "Oslo"})
    assert response.status_code == 202
    body = response.json()
    assert set(body) == CHECK_STATUS_KEYS
    assert body["id"] == "order 1"
    hub = "taskHub=LocalHub&connection=Storage"
    assert body["statusQueryGetUri"] == f"{server.api}/instances/order%201?{hub}"
    assert body["sendEventPostUri"] == f"{server.api}/instances/order%201/raiseEvent/" \
                                       f"{{eventName}}?{hub}"
    assert body["terminatePostUri"] == f"{server.api}/instances/order%201/terminate?" \
                                       f"reason={{text}}&{hub}"
    assert response.headers["Location"] == body["statusQueryGetUri"]
    assert response.headers["Retry-After"] == "10"
    assert json.loads(server.taskhub.get_instance("order 1").input) == {"city": "Oslo"}
    status = http.get(body["statusQueryGetUri"])
    assert status.status_code == 202
    assert status.json()["input"] == {"city": "Oslo"}  # a plain client's object stays one


def test_http_start_with_plain_string_input_keeps_it_a_string(server, http):
    http.post(f"{server.api}/orchestrators/Hello/s1", json="plain text")
    assert json.loads(server.taskhub.get_instance("s1").input) == "plain text"


@pytest.mark.parametrize("body,warned", [
    ("plain text", True),            # get_input() runs json.loads("plain text"): fails
    ('"plain text"', False),         # the value's JSON text, as start_new sends it
    ('{"a": 1}', False), ({"a": 1}, False), (5, False)])
def test_a_start_input_the_sdk_cannot_decode_is_warned(server, http, caplog, body, warned):
    with caplog.at_level(logging.WARNING, logger="devhost.http"):
        assert http.post(f"{server.api}/orchestrators/Hello/w1", json=body).status_code == 202
    lines = [r.getMessage() for r in caplog.records if r.name == "devhost.http"]
    assert bool(lines) == warned
    if warned:
        assert lines[0].startswith('start of Hello (instance w1): the input is the JSON '
                                   'string "plain text", which the Python SDK')


def test_http_start_with_invalid_json_is_400_and_nothing_written(server, http):
    response = http.post(f"{server.api}/orchestrators/Hello/j1", content=b"{not json",
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["Message"] == "Invalid JSON content"
    assert server.taskhub.get_instance("j1") is None


def test_start_with_existing_running_id_is_500_as_the_extension_and_keeps_the_original(
        server, http):
    # DTFx throws OrchestrationAlreadyExistsException (default NonRunningStates dedupe);
    # HttpApiHandler's catch-all answers it with 500.
    client = server.client()
    run(client.start_new("Hello", "dup", {"v": 1}))
    response = http.post(f"{server.api}/orchestrators/Hello/dup", json={"v": 2})
    assert response.status_code == 500
    assert response.json() == {
        "Message": "Something went wrong while processing your request",
        "ExceptionMessage": "An Orchestration instance with the status Pending already exists.",
        "ExceptionType": "DurableTask.Core.Exceptions.OrchestrationAlreadyExistsException"}
    with pytest.raises(Exception, match="already exists"):
        run(client.start_new("Hello", "dup", {"v": 3}))
    assert json.loads(json.loads(server.taskhub.get_instance("dup").input)) == {"v": 1}
    assert server.woken == ["dup"]


def test_start_with_existing_running_id_replaces_it_with_any_state_overridable(
        make_server, http):
    server = make_server(replace_running=True)
    run(server.client().start_new("Hello", "dup", {"v": 1}))
    assert http.post(f"{server.api}/orchestrators/Hello/dup", json={"v": 2}).status_code == 202
    assert json.loads(server.taskhub.get_instance("dup").input) == {"v": 2}


def test_start_with_the_id_of_a_completed_instance_replaces_it(server):
    client = server.client()
    run(client.start_new("Hello", "again", 1))
    finish(server.taskhub, server.clock, "again")
    assert run(client.start_new("Hello", "again", 2)) == "again"
    record = server.taskhub.get_instance("again")
    assert (record.runtime_status, record.input, server.taskhub.get_history("again")) == \
        ("Pending", '"2"', [])


def test_unknown_orchestrator_is_refused_when_names_are_known(make_server):
    server = make_server(orchestrator_names={"Hello"})
    with pytest.raises(Exception) as refused:
        run(server.client().start_new("Nope", "n1"))
    assert str(refused.value) == (
        "The function 'Nope' doesn't exist, is disabled, or is not an orchestrator function. "
        "Additional info: The following are the known orchestrator functions: 'Hello'.")
    assert server.taskhub.get_instance("n1") is None
    assert run(server.client().start_new("Hello", "n2")) == "n2"


def test_orchestrator_names_compare_ignoring_case(make_server):
    # FunctionName equality ignores case in the extension: starting 'HELLO' starts 'Hello'.
    server = make_server(orchestrator_names={"Hello"})
    assert run(server.client().start_new("HELLO", "c1")) == "c1"
    assert server.taskhub.get_instance("c1").name == "HELLO"  # stored as asked, as DTFx


def test_start_refuses_another_task_hub(server, http):
    response = http.post(f"{server.api}/orchestrators/Hello/h1?taskHub=OtherHub")
    assert response.status_code == 400
    assert response.json()["ExceptionMessage"].startswith("taskHub: ")
    assert server.taskhub.get_instance("h1") is None


def test_start_and_wait_returns_the_output_when_the_instance_completes(make_server, clock, http):
    # The hook stands in for a worker that finishes the instance at once.
    server = make_server(on_start=lambda iid: finish(server.taskhub, clock, iid,
                                                     output={"total": 3}))
    response = http.post(f"{server.api}/orchestrators/Hello/w1?timeout=5&pollingInterval=1",
                          json=1)
    assert response.status_code == 200
    assert response.json() == {"total": 3}


def test_start_and_wait_times_out_into_the_check_status_answer(server, http):
    response = http.post(f"{server.api}/orchestrators/Hello/w2?timeout=0&pollingInterval=0",
                          json=1)
    assert response.status_code == 202
    assert response.json()["id"] == "w2"


@pytest.mark.parametrize("query", ["timeout=-1&pollingInterval=1",
                                   "timeout=soon&pollingInterval=1",
                                   "timeout=5&pollingInterval=often"])
def test_start_timeouts_are_parsed_as_the_extension_parses_them(server, http, query):
    # TryGetTimeSpanQueryParameterValue: a value double.TryParse rejects is absent (no
    # wait, the check-status 202); a negative one waits no time.
    response = http.post(f"{server.api}/orchestrators/Hello/w3?{query}")
    assert response.status_code == 202
    assert server.taskhub.get_instance("w3") is not None
