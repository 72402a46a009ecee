import json
from datetime import datetime, timedelta

import azure.functions as func
import pytest
from azure.durable_functions.models.OrchestrationRuntimeStatus import OrchestrationRuntimeStatus

from devhost.http_api import instance_routes
from devhost.taskhub.events import EventType
from tests.devhost.http_api.helpers import finish, queued_events, run, set_running_status


def start(server, instance_id, value=None):
    return run(server.client().start_new("Hello", instance_id, value))


def assert_refused(response, status: int, reason: str) -> None:
    """``response`` has ``status`` and an ExceptionMessage that says ``reason``."""
    assert response.status_code == status
    assert reason in response.json()["ExceptionMessage"]


def assert_empty(response, status: int) -> None:
    """``response`` has ``status`` and no body (``request.CreateResponse(status)``)."""
    assert (response.status_code, response.content) == (status, b"")


# ----------------------------------------------------------------------------- raise event
def test_sdk_raise_event_queues_the_sdk_text_as_the_extension_stores_it(server, caplog,
                                                                       monkeypatch):
    # The SDK posts json.dumps(value) as a JSON string; the extension stores that string,
    # so the orchestrator's event result is the JSON text (azure-functions-durable-python
    # #295), and the host says so once per event name (per process: none said so yet).
    monkeypatch.setattr(instance_routes, "_warned_event_names", set())
    start(server, "e-1")
    run(server.client().raise_event("e-1", "Approval", {"ok": True}))
    raised = queued_events(server.taskhub, "e-1")[-1]
    assert raised["EventType"] == EventType.EventRaised
    assert raised["Name"] == "Approval"
    assert json.loads(raised["Input"]) == '{"ok": true}'
    assert any("issues/295" in r.getMessage() for r in caplog.records)


def test_documented_raise_event_is_202_and_queues_the_value(server, http):
    start(server, "e-2")
    response = http.post(f"{server.api}/instances/e-2/raiseEvent/Reply", json=[1, "two"])
    assert response.status_code == 202
    assert json.loads(queued_events(server.taskhub, "e-2")[-1]["Input"]) == [1, "two"]
    # The event is work for the instance: the work loop is told at once, not at its next poll.
    assert server.woken == ["e-2", "e-2"]  # the start, then the event


def test_raise_event_on_unknown_instance_is_404(server, http):
    response = http.post(f"{server.api}/instances/ghost/raiseEvent/Reply", json=1)
    assert response.status_code == 404
    with pytest.raises(Exception, match="No instance with ID ghost found"):
        run(server.client().raise_event("ghost", "Reply", 1))


def test_raise_event_on_completed_instance_is_410_and_queues_nothing(server, clock, http):
    start(server, "e-3")
    finish(server.taskhub, clock, "e-3")
    response = http.post(f"{server.api}/instances/e-3/raiseEvent/Reply", json=1)
    assert response.status_code == 410
    with pytest.raises(Exception, match="is gone"):
        run(server.client().raise_event("e-3", "Reply", 1))
    # Nothing became visible work for any worker, and no work loop was told of any.
    assert server.taskhub.claim_orchestrations("probe", timedelta(minutes=1)) == []
    assert server.woken == ["e-3"]  # its start only


@pytest.mark.parametrize(("content", "content_type", "message"), [
    (b"{oops", "application/json", "Invalid JSON content"),
    (b"", "application/json", "Invalid JSON content"),  # ConvertToJToken("") throws
    (b"1", "text/plain", "Only application/json request content is supported"),
])
def test_raise_event_with_a_body_that_is_not_json_is_400(server, content, content_type,
                                                         message, http):
    start(server, "e-4")
    response = http.post(f"{server.api}/instances/e-4/raiseEvent/Reply", content=content,
                          headers={"Content-Type": content_type})
    assert response.status_code == 400
    assert response.json()["Message"] == message
    assert [e["EventType"] for e in queued_events(server.taskhub, "e-4")] == \
        [EventType.ExecutionStarted]
    assert server.woken == ["e-4"]


# ----------------------------------------------------------------------- terminate etc.
def test_sdk_terminate_suspend_resume_queue_control_events(server, clock):
    start(server, "c-1")
    client = server.client()
    run(client.suspend("c-1", "maintenance window"))
    assert server.woken == ["c-1", "c-1"]  # each control event is work for the instance
    [suspended] = queued_events(server.taskhub, "c-1")[1:]
    assert (suspended["EventType"], suspended["Reason"]) == \
        (EventType.ExecutionSuspended, "maintenance window")
    set_running_status(server.taskhub, clock, "c-1", "Suspended")
    run(client.resume("c-1", "window over"))
    run(client.terminate("c-1", "operator said so"))
    assert server.woken == ["c-1"] * 4
    events = queued_events(server.taskhub, "c-1")
    assert [e["EventType"] for e in events] == [EventType.ExecutionResumed,
                                               EventType.ExecutionTerminated]
    assert events[0]["Reason"] == "window over"
    # The reason as the client gave it (DTFx ExecutionTerminatedEvent), not JSON.
    assert events[1]["Input"] == "operator said so"


def test_suspend_of_a_suspended_and_resume_of_a_running_instance_are_refused(server, clock,
                                                                            http):
    # DurableClient.SuspendAsync/ResumeAsync throw InvalidOperationException and queue
    # nothing; HttpApiHandler answers 500; the SDK raises "unexpected status code 500" (the
    # extension's e2e suite expects exactly that for Python).
    client = server.client()
    start(server, "c-5")
    with pytest.raises(Exception, match="unexpected status code 500"):
        run(client.resume("c-5", "not suspended"))  # Pending
    run(client.suspend("c-5", "first"))
    set_running_status(server.taskhub, clock, "c-5", "Suspended")
    response = http.post(f"{server.api}/instances/c-5/suspend?reason=again")
    assert response.status_code == 500
    assert response.json() == {
        "Message": "Something went wrong while processing your request",
        "ExceptionMessage": "Cannot suspend the orchestration instance c-5 because instance "
                            "is in the Suspended state.",
        "ExceptionType": "System.InvalidOperationException"}
    with pytest.raises(Exception, match="unexpected status code 500"):
        run(client.suspend("c-5", "again"))
    run(client.resume("c-5", "go"))
    set_running_status(server.taskhub, clock, "c-5", "Running")
    response = http.post(f"{server.api}/instances/c-5/resume?reason=again")
    assert response.status_code == 500
    assert response.json()["ExceptionMessage"] == (
        "Cannot resume the orchestration instance c-5 because instance is in the Running "
        "state.")
    assert server.taskhub.claim_orchestrations("probe", timedelta(minutes=1)) == []


@pytest.mark.parametrize("op", ["terminate", "suspend", "resume"])
def test_control_operations_answer_202_404_410(server, clock, op, http):
    start(server, "c-2")
    if op == "resume":
        run(server.client().suspend("c-2", "first"))
        set_running_status(server.taskhub, clock, "c-2", "Suspended")
    assert http.post(f"{server.api}/instances/c-2/{op}?reason=x").status_code == 202
    assert_empty(http.post(f"{server.api}/instances/nobody/{op}?reason=x"), 404)
    with pytest.raises(Exception, match="No instance with ID 'nobody' found."):
        run(getattr(server.client(), op)("nobody", "x"))
    start(server, "c-3")
    finish(server.taskhub, clock, "c-3")
    assert_empty(http.post(f"{server.api}/instances/c-3/{op}?reason=x"), 410)


def test_unknown_operation_is_404(server, http):
    start(server, "c-4")
    assert_refused(http.post(f"{server.api}/instances/c-4/explode"), 404,
                   "unknown instance operation 'explode'")


# ----------------------------------------------------------------------------- rewind
def test_rewind_answers_as_the_extension(server, clock, http):
    # HandleRewindInstanceRequestAsync: 404 unknown, 410 Completed/Terminated; then
    # DurableClient.RewindAsync refuses anything but Failed (500). (A Failed instance is
    # rewound: tests/devhost/test_fidelity_rewind.py.)
    client = server.client()
    with pytest.raises(Exception, match="No instance with ID ghost found."):
        run(client.rewind("ghost", "retry"))
    start(server, "r-1")
    response = http.post(f"{server.api}/instances/r-1/rewind?reason=retry")
    assert response.status_code == 500
    assert response.json()["ExceptionMessage"] == (
        "The rewind operation is only supported on failed orchestration instances.")
    finish(server.taskhub, clock, "r-1")
    assert_empty(http.post(f"{server.api}/instances/r-1/rewind?reason=retry"), 410)
    with pytest.raises(Exception, match="only supported on failed orchestration instances"):
        run(client.rewind("r-1", "retry"))
    assert server.woken == ["r-1"]  # its start: a refused rewind is no work


# ----------------------------------------------------------------------------- restart
def test_restart_with_new_id_starts_a_copy(server, clock, http):
    start(server, "rs-1", {"order": 42})
    finish(server.taskhub, clock, "rs-1")
    response = http.post(f"{server.api}/instances/rs-1/restart")
    assert response.status_code == 202
    new_id = response.json()["id"]
    assert new_id != "rs-1"
    copy = server.taskhub.get_instance(new_id)
    assert (copy.name, copy.runtime_status, copy.input) == \
        ("Hello", "Pending", server.taskhub.get_instance("rs-1").input)
    assert server.taskhub.get_instance("rs-1").runtime_status == "Completed"
    assert server.woken == ["rs-1", new_id]


def test_sdk_restart_with_same_id_replaces_the_ended_instance(server, clock):
    start(server, "rs-2", "in")
    finish(server.taskhub, clock, "rs-2")
    result = run(server.client().restart("rs-2", restart_with_new_instance_id=False))
    # The SDK hands back the response body: the documented check-status payload.
    assert result["id"] == "rs-2"
    record = server.taskhub.get_instance("rs-2")
    assert (record.runtime_status, json.loads(record.input)) == ("Pending", '"in"')


def test_restart_errors_answer_as_the_extension(server, http):
    # HandleRestartInstanceRequestAsync: an unknown id is 400 with the extension's texts
    # (RestartAsync's typo included); the SDK raises on the unexpected 400.
    response = http.post(f"{server.api}/instances/ghost/restart")
    assert response.status_code == 400
    assert response.json() == {
        "Message": "InstanceId does not match a valid orchestration instance.",
        "ExceptionMessage": "An orchestrastion with the instanceId ghost was not found."}
    with pytest.raises(Exception, match="unexpected status code 400"):
        run(server.client().restart("ghost"))
    # Restarting a running instance under its own id is a start with a running id: 500.
    start(server, "rs-3")
    response = http.post(f"{server.api}/instances/rs-3/restart?restartWithNewInstanceId=false")
    assert response.status_code == 500
    assert "already exists" in response.json()["ExceptionMessage"]
    # An unparsable flag is the default (a new id), as bool.TryParse decides.
    response = http.post(f"{server.api}/instances/rs-3/restart?restartWithNewInstanceId=no")
    assert response.status_code == 202 and response.json()["id"] != "rs-3"


# ----------------------------------------------------------------------------- purge
def test_purge_one_instance(server, clock, http):
    client = server.client()
    start(server, "p-1")
    finish(server.taskhub, clock, "p-1")
    assert run(client.purge_instance_history("p-1")).instances_deleted == 1
    assert server.taskhub.get_instance("p-1") is None
    assert server.taskhub.get_history("p-1") == []
    assert run(client.purge_instance_history("p-1")).instances_deleted == 0
    assert_empty(http.delete(f"{server.api}/instances/p-1"), 404)


def test_purge_of_a_running_instance_deletes_it_as_azure_storage_does(server, http):
    # HandleDeleteHistoryByIdRequestAsync purges whatever the state
    # (AzureTableTrackingStore.PurgeInstanceHistoryAsync(instanceId)).
    start(server, "p-2")
    response = http.delete(f"{server.api}/instances/p-2")
    assert (response.status_code, response.json()) == (200, {"instancesDeleted": 1})
    assert server.taskhub.get_instance("p-2") is None


def test_purge_by_filter_deletes_only_ended_instances_in_the_window(server, clock):
    client = server.client()
    for n in range(4):
        start(server, f"pb-{n}")
    for n in (0, 1, 2):
        finish(server.taskhub, clock, f"pb-{n}")
    window_end = clock.now()
    clock.advance(timedelta(minutes=1))
    start(server, "pb-late")
    finish(server.taskhub, clock, "pb-late")
    result = run(client.purge_instance_history_by(
        created_time_from=datetime(2029, 1, 1),
        created_time_to=window_end.replace(tzinfo=None),
        runtime_status=[OrchestrationRuntimeStatus.Completed]))
    assert result.instances_deleted == 3
    remaining = {r.instance_id for r in server.taskhub.query()[0]}
    assert remaining == {"pb-3", "pb-late"}
    # No status filter purges every status in the window, the running pb-3 too.
    assert run(client.purge_instance_history_by(
        created_time_from=datetime(2029, 1, 1), runtime_status=[])).instances_deleted == 2
    assert server.taskhub.query()[0] == []


def test_purge_by_filter_answers_as_the_extension(server, http, caplog):
    response = http.delete(f"{server.api}/instances/")
    assert (response.status_code, response.json()) == \
        (400, "Please provide value for 'createdTimeFrom' parameter.")
    # Only the ended statuses of a filter count; a filter left with none purges every
    # status (AzureTableTrackingStore), a running instance too, with the host's warning.
    start(server, "pf-1")
    response = http.delete(f"{server.api}/instances/",
                            params={"createdTimeFrom": "2029-01-01T00:00:00Z",
                                    "runtimeStatus": "Running"})
    assert (response.status_code, response.json()) == (200, {"instancesDeleted": 1})
    assert any("purge by filter deleted 1 instance(s) that had not ended" in r.getMessage()
               for r in caplog.records)
    assert_empty(http.delete(f"{server.api}/instances/",
                             params={"createdTimeFrom": "2029-01-01T00:00:00Z"}), 404)


# ----------------------------------------------------------- SDK helpers built on the binding
def test_sdk_check_status_response_urls_reach_this_api(server, http):
    start(server, "cs-1")
    request = func.HttpRequest("POST", f"{server.base_url}/api/start", body=b"")
    response = server.client().create_check_status_response(request, "cs-1")
    assert response.status_code == 202
    payload = json.loads(response.get_body())
    assert payload["id"] == "cs-1"
    assert response.headers["Location"] == payload["statusQueryGetUri"]
    assert http.get(payload["statusQueryGetUri"]).json()["instanceId"] == "cs-1"
    event_url = payload["sendEventPostUri"].replace("{eventName}", "Ping")
    assert http.post(event_url, json=1).status_code == 202
    terminate_url = payload["terminatePostUri"].replace("{text}", "done")
    assert http.post(terminate_url).status_code == 202
    assert [e["EventType"] for e in queued_events(server.taskhub, "cs-1")][1:] == \
        [EventType.EventRaised, EventType.ExecutionTerminated]


def test_sdk_wait_for_completion_returns_output_or_check_status(server, clock):
    client = server.client()
    request = func.HttpRequest("POST", f"{server.base_url}/api/start", body=b"")
    start(server, "wf-1")
    finish(server.taskhub, clock, "wf-1", output={"done": True})
    response = run(client.wait_for_completion_or_create_check_status_response(
        request, "wf-1", timeout_in_milliseconds=1, retry_interval_in_milliseconds=1))
    assert response.status_code == 200
    assert json.loads(response.get_body()) == {"done": True}
    start(server, "wf-2")
    response = run(client.wait_for_completion_or_create_check_status_response(
        request, "wf-2", timeout_in_milliseconds=1, retry_interval_in_milliseconds=1))
    assert response.status_code == 202
    assert json.loads(response.get_body())["id"] == "wf-2"
