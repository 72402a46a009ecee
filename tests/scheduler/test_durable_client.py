"""raise_event through the real SDK client: failures mapped by HTTP status, never by text.

The SDK's own ``raise_event`` answers 404 and 410 with a plain Exception carrying only
text; :mod:`scheduler.durable_client` makes the same request and maps the status. These
tests run it with the SDK's ``DurableOrchestrationClient`` against the local host's
Durable HTTP API (a real uvicorn server), so the statuses come over HTTP.
"""

import json
import socket
from datetime import UTC, datetime, timedelta

import pytest
from azure.durable_functions import DurableOrchestrationClient

from clocks import ManualClock
from devhost.http_api import client_binding_json
from devhost.taskhub.events import EventType
from devhost.taskhub.store import TaskHub
from orders.errors import OrderServiceError
from orders.models.messages import AgentOutcome, AgentReply
from scheduler.durable_client import (
    DurableClientError,
    InstanceGoneError,
    InstanceNotFoundError,
    error_for_status,
    raise_event,
)
from scheduler.replies import route_reply
from tests.devhost.http_api.helpers import finish, queued_events, run


@pytest.fixture
def clock():
    return ManualClock(datetime(2030, 1, 1, tzinfo=UTC))


@pytest.fixture
def server(listener, tmp_path, clock):
    taskhub = TaskHub(tmp_path / "taskhub.sqlite", clock, name="LocalHub", synchronous="NORMAL")
    return listener.mount(taskhub, clock)


def start(server, instance_id):
    run(server.client().start_new("Hello", instance_id, None))


def reply_for(instance_id):
    return AgentReply(message_id=f"{instance_id}:charge:reply", order_key="ORD-1",
                      instance_id=instance_id, operation="charge", event_name="charge-reply",
                      outcome=AgentOutcome.SUCCEEDED, tries=1, result={"chargeId": "C-1"})


def closed_port_client():
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return DurableOrchestrationClient(client_binding_json("LocalHub", f"http://127.0.0.1:{port}"))


# ----------------------------------------------------------------------------- raise_event
def test_delivered_event_is_queued_as_the_extension_stores_the_sdk_body(server):
    # The SDK's body is the value's JSON text as a JSON string, and the extension stores
    # that string: the orchestrator's event result is the JSON text
    # (azure-functions-durable-python#295; orchestrators/agent_steps.py reads it).
    start(server, "ORD-1:1")
    run(raise_event(server.client(), "ORD-1:1", "charge-reply", {"ok": True}))
    raised = queued_events(server.taskhub, "ORD-1:1")[-1]
    assert raised["EventType"] == EventType.EventRaised
    assert raised["Name"] == "charge-reply"
    assert json.loads(json.loads(raised["Input"])) == {"ok": True}


def permanent_raise_event_error(server, instance_id, kind):
    """raise_event's error of type ``kind`` for ``instance_id``, checked to be permanent."""
    with pytest.raises(kind) as info:
        run(raise_event(server.client(), instance_id, "charge-reply", {"ok": True}))
    error = info.value
    assert isinstance(error, OrderServiceError)
    assert error.retryable is False
    assert error.retry_after is None
    return error


def test_404_from_raise_event_is_a_permanent_instance_not_found(server):
    error = permanent_raise_event_error(server, "ORD-9:1", InstanceNotFoundError)
    assert error.status == 404
    assert str(error) == "raise event charge-reply on ORD-9:1: no instance with that id (HTTP 404)"


def test_410_from_raise_event_is_a_permanent_instance_gone(server, clock):
    start(server, "ORD-2:1")
    finish(server.taskhub, clock, "ORD-2:1")
    error = permanent_raise_event_error(server, "ORD-2:1", InstanceGoneError)
    assert error.status == 410
    # Nothing became visible work for any worker.
    assert server.taskhub.claim_orchestrations("probe", timedelta(minutes=1)) == []


def test_no_answer_from_the_extension_is_retryable():
    with pytest.raises(DurableClientError) as info:
        run(raise_event(closed_port_client(), "ORD-3:1", "charge-reply", {"ok": True}))
    error = info.value
    assert type(error) is DurableClientError
    assert error.status is None
    assert error.retryable is True
    assert error.retry_after is None


def test_empty_event_name_is_refused_before_any_request():
    with pytest.raises(ValueError, match="event_name: must be a non-empty string"):
        run(raise_event(closed_port_client(), "ORD-3:1", "", None))


@pytest.mark.parametrize(("status", "kind", "retryable"), [
    (404, InstanceNotFoundError, False),
    (410, InstanceGoneError, False),
    (400, DurableClientError, False),
    (409, DurableClientError, False),
    (408, DurableClientError, True),
    (429, DurableClientError, True),
    (500, DurableClientError, True),
    (503, DurableClientError, True),
])
def test_error_for_status(status, kind, retryable):
    error = error_for_status(status, "raise event E on I")
    assert type(error) is kind
    assert (error.status, error.retryable, error.retry_after) == (status, retryable, None)


@pytest.mark.parametrize("status", [200, 202, 204])
def test_success_statuses_are_no_error(status):
    assert error_for_status(status, "raise event E on I") is None


# ----------------------------------------------------------------------------- route_reply
def test_route_reply_delivers_to_a_running_instance(server):
    start(server, "ORD-1:2")
    assert run(route_reply(server.client(), reply_for("ORD-1:2"))) is True
    assert queued_events(server.taskhub, "ORD-1:2")[-1]["Name"] == "charge-reply"


def test_route_reply_ignores_a_reply_for_an_ended_or_unknown_instance(server, clock):
    start(server, "ORD-1:3")
    finish(server.taskhub, clock, "ORD-1:3")
    assert run(route_reply(server.client(), reply_for("ORD-1:3"))) is False  # 410
    assert run(route_reply(server.client(), reply_for("ORD-1:4"))) is False  # 404


def test_route_reply_raises_other_failures_for_redelivery():
    with pytest.raises(DurableClientError) as info:
        run(route_reply(closed_port_client(), reply_for("ORD-1:5")))
    assert info.value.retryable is True
