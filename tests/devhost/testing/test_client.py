"""The durable_host client: each way into the app, each mock, and what a bad call says."""

from datetime import timedelta
from pathlib import Path

import httpx
import pytest

APP = Path(__file__).parent / "forms_app"


@pytest.fixture
def host(durable_host_factory):
    return durable_host_factory(APP)


def test_a_message_sent_to_a_queue_the_app_listens_on_starts_its_orchestration(host):
    host.send("jobs", b"", message_id="job-1")
    host.run_until_idle()
    (started,) = [e for e in host.history("job-1")["historyEvents"]
                  if e["EventType"] == "TaskCompleted"][-1:]
    assert started["Result"] == "ab"
    assert host.status("job-1")["runtimeStatus"] == "Running"  # waits for "finish"


def test_an_entity_is_signalled_and_read(host):
    assert host.entity_state("counter", "c") is None
    host.signal_entity("counter", "c", "add", 5)
    host.signal_entity("counter", "c", "add", 2)
    host.run_until_idle()
    assert host.entity_state("counter", "c") == 7


def test_mocked_activity_and_http_answer_instead(host):
    host.mock_activity("ECHO", lambda value: value.upper())
    host.mock_http("https://service.invalid/", lambda request: {"statusCode": 503})
    host.start("http_calls", instance_id="h-1")
    host.run_until_idle()
    events = host.history("h-1")["historyEvents"]
    assert [e["Result"] for e in events if e["EventType"] == "TaskCompleted"] == [
        {"statusCode": 503, "headers": {}, "content": None}, "AFTER"]


def test_the_clock_moves_only_when_told(host):
    before = host.now()
    host.start("timers", instance_id="t-1")
    host.run_until_idle()
    assert host.now() == before
    assert host.advance(timedelta(minutes=59)) == before + timedelta(minutes=59)
    assert host.status("t-1")["runtimeStatus"] == "Running"
    assert not any(e["EventType"] == "TimerFired" for e in host.history("t-1")["historyEvents"])
    host.advance(timedelta(minutes=1))
    assert any(e["EventType"] == "TimerFired" for e in host.history("t-1")["historyEvents"])


@pytest.mark.parametrize(("call", "text"), [
    (lambda h: h.mock_activity("nope", 1), "the app has no activity 'nope'; its activities: "
                                           "echo, flaky"),
    (lambda h: h.status("missing"), "no instance with id 'missing'"),
    (lambda h: h.start("nope"), "400"),
])
def test_a_bad_call_says_what_is_wrong(host, call, text):
    with pytest.raises((KeyError, httpx.HTTPStatusError)) as caught:
        call(host)
    assert text in str(caught.value)


@pytest.mark.parametrize("value", [None, "Paris", "", 5, 1.5, True, [1, "a"], {"a": {"b": 1}},
                                   '{"a": 1}'])
def test_start_hands_the_orchestrator_its_input_as_the_sdk_client_does(host, value):
    instance_id = host.start("echo_input", value)
    host.run_until_idle()
    status = host.status(instance_id)
    assert (status["runtimeStatus"], status["output"]) == ("Completed", value)
