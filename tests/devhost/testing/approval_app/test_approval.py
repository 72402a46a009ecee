"""A user's tests of the approval workflow, with the durable_host fixture alone."""

from datetime import timedelta

REQUEST = {"approver": "ana", "amount": 1200}


def test_no_answer_within_three_days_escalates(durable_host):
    instance_id = durable_host.start("approval", REQUEST)
    durable_host.run_until_idle()
    assert durable_host.status(instance_id)["runtimeStatus"] == "Running"
    durable_host.advance(timedelta(days=2, hours=23))
    assert durable_host.status(instance_id)["runtimeStatus"] == "Running"
    durable_host.advance(timedelta(hours=1))
    status = durable_host.status(instance_id)
    assert (status["runtimeStatus"], status["output"]) == ("Completed", "escalated")


def test_an_answer_in_time_is_the_outcome(durable_host):
    response = durable_host.http("POST", "approvals", json=REQUEST)
    assert response.status_code == 202
    instance_id = response.json()["id"]
    durable_host.run_until_idle()
    durable_host.advance(timedelta(days=1))
    durable_host.raise_event(instance_id, "approval", True)
    durable_host.run_until_idle()
    assert durable_host.status(instance_id)["output"] == "approved"


def test_a_mocked_activity_answers_instead(durable_host):
    asked = []
    durable_host.mock_activity("notify_approver", lambda request: asked.append(request) or "ok")
    instance_id = durable_host.start("approval", REQUEST)
    durable_host.advance(timedelta(days=3))
    assert asked == [REQUEST]
    events = durable_host.history(instance_id)["historyEvents"]
    assert [e["EventType"] for e in events] == [
        "ExecutionStarted", "TaskCompleted", "TimerCreated", "TimerFired", "TaskCompleted",
        "ExecutionCompleted"]
