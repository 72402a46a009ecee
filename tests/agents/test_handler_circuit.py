"""The agent's reply says when an open circuit refused a request before any call (A5, X6)."""

from datetime import timedelta

import pytest

from agents import handler
from clocks import ManualClock
from orders.circuit import BreakerRegistry
from orders.models import ProcessState
from orders.models.messages import AgentOutcome, AgentReply, AgentRequest
from orders.runtime import Services
from orders.settings import Settings
from tests.agents.fake_remote import FakeRemote
from tests.support.stores import put, sqlite_stores


@pytest.fixture
def clock():
    return ManualClock()


def make_services(tmp_path, clock, remote):
    settings = Settings(DEVHOST_DATA_DIR=str(tmp_path), CIRCUIT_FAILURE_THRESHOLD=2,
                        CIRCUIT_COOL_DOWN_S=5.0, PAYMENT_API_URL="http://remote")
    breakers = BreakerRegistry(clock=clock, failure_threshold=2,
                               cool_down=timedelta(seconds=5))
    stores = sqlite_stores(tmp_path, clock)
    put(stores.states, "ORD-1", ProcessState.PROCESSING, attempt=1)  # held by ORD-1:1
    return Services(settings=settings, clock=clock, stores=stores, sender=None,
                    breakers=breakers, http=remote.client(), settler=None)


def request(clock, order_key="ORD-1"):
    return AgentRequest(message_id=f"{order_key}:1:charge", order_key=order_key,
                        instance_id=f"{order_key}:1", service="payment", operation="charge",
                        idempotency_key=f"{order_key}:charge",
                        complete_by=clock.now() + timedelta(seconds=30), max_attempts=4,
                        event_name="charge-reply", payload={"orderId": order_key})


def open_circuit(services, clock):
    breaker = services.breakers.get("payment")
    breaker.record_failure()
    breaker.record_failure()
    return breaker.open_until


def test_first_delivery_refused_before_any_call_says_circuit_open(tmp_path, clock):
    remote = FakeRemote(clock, [200])
    services = make_services(tmp_path, clock, remote)
    until = open_circuit(services, clock)
    reply = handler.handle(request(clock), services, sleep=lambda s: None, delivery_count=1)
    assert (reply.outcome, reply.tries, reply.circuit_open) == (
        AgentOutcome.TRANSIENT_FAILURE, 0, True)
    assert reply.retry_at == until == clock.now() + timedelta(seconds=5)
    assert remote.seen == []


def test_redelivery_refused_by_the_circuit_is_not_vouched_for(tmp_path, clock):
    # An earlier delivery may have called the service and crashed before replying.
    remote = FakeRemote(clock, [200])
    services = make_services(tmp_path, clock, remote)
    open_circuit(services, clock)
    reply = handler.handle(request(clock), services, sleep=lambda s: None, delivery_count=2)
    assert (reply.outcome, reply.tries) == (AgentOutcome.TRANSIENT_FAILURE, 0)
    assert (reply.circuit_open, reply.retry_at) == (False, None)


def test_circuit_opened_by_the_requests_own_calls_is_a_counted_failure(tmp_path, clock):
    remote = FakeRemote(clock, [503])
    services = make_services(tmp_path, clock, remote)
    reply = handler.handle(request(clock), services,
                           sleep=lambda s: clock.advance(timedelta(seconds=s)))
    assert "circuit of payment is open" in reply.reason
    assert (reply.tries, reply.circuit_open) == (2, False)
    assert len(remote.seen) == 2


def test_reply_written_before_the_fields_existed_still_loads(clock):
    old = {"schemaVersion": 1, "messageId": "ORD-1:1:charge:reply", "orderId": "ORD-1",
           "instanceId": "ORD-1:1", "operation": "charge", "eventName": "charge-reply",
           "outcome": "TransientFailure", "attempts": 0, "statusCode": None,
           "result": None, "reason": "circuit of payment is open"}
    reply = AgentReply.model_validate(old)
    assert (reply.circuit_open, reply.retry_at) == (False, None)
    assert reply.model_dump(mode="json")["circuitOpen"] is False
