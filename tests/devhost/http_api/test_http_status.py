from datetime import UTC, datetime, timedelta

import pytest

from tests.devhost.http_api.helpers import finish, run


def test_sdk_get_status_of_a_pending_instance(server, clock):
    client = server.client()
    run(client.start_new("Hello", "s-1", {"city": "Tokyo"}))
    status = run(client.get_status("s-1"))
    assert status.name == "Hello"
    assert status.instance_id == "s-1"
    assert status.runtime_status.value == "Pending"
    # As on Azure (azure-functions-durable-python#195): the JSON text the SDK sent.
    assert status.input_ == '{"city": "Tokyo"}'
    assert status.output is None
    assert status.custom_status is None
    assert status.created_time == datetime(2030, 1, 1, tzinfo=UTC)
    assert status.last_updated_time == datetime(2030, 1, 1, tzinfo=UTC)


def test_documented_status_of_a_pending_instance_is_202_with_location(server, clock, http):
    clock.advance(timedelta(seconds=61, microseconds=500))
    http.post(f"{server.api}/orchestrators/Hello/s-2", json=[1, 2])
    url = f"{server.api}/instances/s-2"
    response = http.get(url)
    assert response.status_code == 202
    assert response.headers["Location"] == url
    assert response.headers["Retry-After"] == "5"
    assert response.json() == {
        "name": "Hello", "instanceId": "s-2", "runtimeStatus": "Pending", "input": [1, 2],
        "customStatus": None, "output": None, "createdTime": "2030-01-01T00:01:01Z",
        "lastUpdatedTime": "2030-01-01T00:01:01Z",
    }


def test_status_of_a_completed_instance_is_200_with_output(server, clock, http):
    client = server.client()
    run(client.start_new("Hello", "s-3", 5))
    finish(server.taskhub, clock, "s-3", output={"sum": 15})
    response = http.get(f"{server.api}/instances/s-3")
    assert response.status_code == 200
    assert "Location" not in response.headers
    body = response.json()
    assert (body["runtimeStatus"], body["output"], body["input"]) == \
        ("Completed", {"sum": 15}, "5")
    assert body["lastUpdatedTime"] > body["createdTime"]
    status = run(client.get_status("s-3"))
    assert status.runtime_status.value == "Completed"
    assert status.output == {"sum": 15}


def test_show_input_false_hides_the_input(server, http):
    run(server.client().start_new("Hello", "s-4", "secret"))
    assert http.get(f"{server.api}/instances/s-4?showInput=false").json()["input"] is None
    # The SDK leaves false flags out of the URL, so the documented default (true) applies.
    assert run(server.client().get_status("s-4", show_input=False)).input_ == '"secret"'


def test_status_of_unknown_instance_is_404_without_a_body_as_the_extension(server, http):
    # HttpApiHandler answers request.CreateResponse(HttpStatusCode.NotFound): no content,
    # so the SDK's status has an empty message and no runtime status.
    response = http.get(f"{server.api}/instances/nobody")
    assert (response.status_code, response.content) == (404, b"")
    status = run(server.client().get_status("nobody"))
    assert status.runtime_status is None
    assert status.message == ""


def test_failed_instance_is_200_or_500_on_request(server, clock, http):
    run(server.client().start_new("Hello", "s-5"))
    finish(server.taskhub, clock, "s-5", status="Failed", output="boom")
    assert http.get(f"{server.api}/instances/s-5").status_code == 200
    response = http.get(f"{server.api}/instances/s-5?returnInternalServerErrorOnFailure=true")
    assert response.status_code == 500
    assert response.json()["runtimeStatus"] == "Failed"


@pytest.mark.parametrize(("query", "has_history"), [
    ("showHistory=yes", False), ("showHistory=1", False), ("showHistory=", False),
    ("showHistory=TRUE", True), ("showHistory=%20true%20", True)])
def test_boolean_query_values_parse_as_the_extension_parses_them(server, http, clock, query,
                                                                 has_history):
    # TryGetBooleanQueryParameterValue (.NET bool.TryParse): a value that does not parse
    # means the default, it is no error.
    run(server.client().start_new("Hello", "s-6"))
    finish(server.taskhub, clock, "s-6")
    response = http.get(f"{server.api}/instances/s-6?{query}")
    assert response.status_code == 200
    assert ("historyEvents" in response.json()) is has_history


def test_show_history_of_a_pending_instance_is_null(server, http):
    run(server.client().start_new("Hello", "s-7"))
    body = http.get(f"{server.api}/instances/s-7?showHistory=true").json()
    assert body["historyEvents"] is None
    assert "historyEvents" not in http.get(f"{server.api}/instances/s-7").json()


def test_show_history_has_the_documented_shape(server, clock, http):
    run(server.client().start_new("Hello", "h-1", {"city": "Tokyo"}))
    history = finish(server.taskhub, clock, "h-1", output=["Hello Tokyo!"])
    ts = [e["Timestamp"] for e in history]
    body = http.get(f"{server.api}/instances/h-1?showHistory=true").json()
    assert body["historyEvents"] == [
        {"EventType": "ExecutionStarted", "Timestamp": ts[0], "FunctionName": "Hello",
         "Input": '{"city": "Tokyo"}'},
        {"EventType": "TaskCompleted", "Timestamp": ts[5], "FunctionName": "SayHello",
         "ScheduledTime": ts[2], "Input": "Tokyo"},
        {"EventType": "TimerCreated", "Timestamp": ts[6], "FireAt": "2030-01-01T01:00:00.000000Z"},
        {"EventType": "TimerFired", "Timestamp": ts[9], "FireAt": "2030-01-01T01:00:00.000000Z"},
        {"EventType": "EventRaised", "Timestamp": ts[10], "Name": "Approval",
         "Input": {"ok": True}},
        {"EventType": "TaskFailed", "Timestamp": ts[14], "FunctionName": "Charge",
         "ScheduledTime": ts[11], "Input": {"amount": 5}, "Reason": "card declined",
         "Details": "trace"},
        {"EventType": "ExecutionCompleted", "Timestamp": ts[16],
         "OrchestrationStatus": "Completed"},
    ]


def test_show_history_output_adds_results_and_show_input_false_drops_inputs(server, clock, http):
    run(server.client().start_new("Hello", "h-2", {"city": "Tokyo"}))
    finish(server.taskhub, clock, "h-2")
    url = f"{server.api}/instances/h-2?showHistory=true&showHistoryOutput=true&showInput=false"
    events = http.get(url).json()["historyEvents"]
    by_type = {e["EventType"]: e for e in events}
    assert by_type["TaskCompleted"]["Result"] == "Hello Tokyo!"
    assert by_type["ExecutionCompleted"]["Result"] == ["Hello Tokyo!"]
    assert all("Input" not in e for e in events)


def test_sdk_get_status_with_history(server, clock):
    client = server.client()
    run(client.start_new("Hello", "h-3", 1))
    finish(server.taskhub, clock, "h-3")
    status = run(client.get_status("h-3", show_history=True, show_history_output=True))
    types = [e["EventType"] for e in status.historyEvents]
    assert types == ["ExecutionStarted", "TaskCompleted", "TimerCreated", "TimerFired",
                     "EventRaised", "TaskFailed", "ExecutionCompleted"]
    assert status.historyEvents[1]["Result"] == "Hello Tokyo!"
