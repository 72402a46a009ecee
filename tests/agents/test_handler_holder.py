"""An agent calls its service only for the attempt that holds the order (A1, S4).

A forged or stale request (any well-formed body on an app-only request queue) is answered
without a call, as a request past its deadline is: TransientFailure, no call, the same
reply MessageId (A4).
"""

from datetime import timedelta

import pytest

from agents import handler
from clocks import ManualClock
from orders.circuit import BreakerRegistry
from orders.lifecycle.ids import reply_message_id
from orders.models import ProcessState
from orders.models.messages import AgentOutcome, AgentRequest
from orders.runtime import Services
from orders.settings import Settings
from tests.agents.fake_remote import FakeRemote
from tests.support.stores import put, sqlite_stores

K = "ORD-7"
P = ProcessState


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def remote(clock):
    return FakeRemote(clock, [201])


@pytest.fixture
def services(tmp_path, clock, remote):
    stores = sqlite_stores(tmp_path, clock)
    settings = Settings(DEVHOST_DATA_DIR=str(tmp_path), PAYMENT_API_URL="http://remote")
    svc = Services(settings=settings, clock=clock, stores=stores, sender=None,
                   breakers=BreakerRegistry(clock=clock), http=remote.client(), settler=None)
    yield svc
    stores.close()


def request(clock, instance_id, operation="charge"):
    return AgentRequest(message_id=f"{instance_id}:{operation}:forged", order_key=K,
                        instance_id=instance_id, service="payment", operation=operation,
                        idempotency_key=f"{K}:{operation}:forged",
                        complete_by=clock.now() + timedelta(seconds=30), max_attempts=3,
                        event_name=f"{operation}-reply", payload={"orderId": K})


def assert_not_called(reply, remote, sent, *parts):
    assert remote.seen == []
    assert (reply.outcome, reply.tries, reply.circuit_open, reply.status_code) == (
        AgentOutcome.TRANSIENT_FAILURE, 0, False, None)
    assert reply.message_id == reply_message_id(sent.message_id)
    assert (reply.order_key, reply.instance_id) == (K, sent.instance_id)
    for part in parts:
        assert part in reply.reason


@pytest.mark.parametrize(("state", "holder"), [
    (P.COMPENSATED, f"{K}:comp:1"),
    (P.PROCESSED, f"{K}:7"),
    (P.ERROR, f"{K}:7"),
    (P.PENDING, "nobody"),
])
def test_a_forged_charge_for_an_order_no_attempt_runs_is_not_called(
        services, remote, clock, caplog, state, holder):
    put(services.stores.states, K, state, attempt=7, locked_by=None if state is P.PENDING
        else holder)
    sent = request(clock, f"{K}:8")
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert_not_called(reply, remote, sent,
                      f"not called: order {K} is {state.value}, held by {holder}, "
                      f"not by {K}:8")
    [warning] = [r for r in caplog.records if r.levelname == "WARNING"]
    assert f"order {K} is {state.value}" in warning.getMessage()


def test_a_charge_of_an_attempt_that_lost_the_order_is_not_called(services, remote, clock):
    put(services.stores.states, K, P.PROCESSING, attempt=3)  # attempt 3 holds it now
    sent = request(clock, f"{K}:2")
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert_not_called(reply, remote, sent, f"is Processing, held by {K}:3, not by {K}:2")


def test_a_refund_while_the_order_is_processing_is_not_called(services, remote, clock):
    put(services.stores.states, K, P.PROCESSING, attempt=1, locked_by=f"{K}:comp:1")
    sent = request(clock, f"{K}:comp:1", "refund")
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert_not_called(reply, remote, sent, f"is Processing, held by {K}:comp:1",
                      "refund is called only while Compensating")


def test_a_charge_while_the_order_is_compensating_is_not_called(services, remote, clock):
    put(services.stores.states, K, P.COMPENSATING)  # held by ORD-7:comp:1
    sent = request(clock, f"{K}:comp:1")
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert_not_called(reply, remote, sent, "charge is called only while Processing")


def test_a_request_for_an_order_without_a_record_is_not_called(services, remote, clock):
    sent = request(clock, f"{K}:1")
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert_not_called(reply, remote, sent, f"order {K} has no state record",
                      f"not held by {K}:1")


def test_the_holding_attempts_charge_is_called(services, remote, clock):
    put(services.stores.states, K, P.PROCESSING, attempt=2)
    reply = handler.handle(request(clock, f"{K}:2"), services, sleep=lambda s: None)
    assert (reply.outcome, reply.tries, len(remote.seen)) == (AgentOutcome.SUCCEEDED, 1, 1)
    assert remote.seen[0].idempotency_key == f"{K}:charge:forged"


def test_the_compensation_attempts_refund_is_called(services, remote, clock):
    put(services.stores.states, K, P.COMPENSATING, attempt=2, locked_by=f"{K}:comp:2")
    reply = handler.handle(request(clock, f"{K}:comp:2", "refund"), services,
                           sleep=lambda s: None)
    assert (reply.outcome, reply.tries, len(remote.seen)) == (AgentOutcome.SUCCEEDED, 1, 1)


def test_past_its_deadline_the_reply_is_as_before_whoever_holds_the_order(
        services, remote, clock):
    put(services.stores.states, K, P.COMPENSATED, locked_by=f"{K}:comp:1")
    sent = request(clock, f"{K}:1")
    clock.advance(timedelta(seconds=31))
    reply = handler.handle(sent, services, sleep=lambda s: None)
    assert (reply.outcome, reply.tries, remote.seen) == (
        AgentOutcome.TRANSIENT_FAILURE, 0, [])
    assert reply.reason == "deadline reached before the call"
