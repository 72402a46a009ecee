"""A service answer the app could not re-encode never makes the agent's reply unsendable.

Before, an answer such as ``{"fee": NaN}`` went into the reply's ``result``; the sender
refuses NaN, so the agent raised on every delivery of the request and called the service
again each time, until MaxDeliveryCountExceeded.
"""

from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest

from agents import handler
from clocks import ManualClock
from orders.circuit import BreakerRegistry
from orders.models import ProcessState
from orders.models.messages import AgentOutcome, AgentRequest
from orders.settings import Settings
from tests.support.stores import put, sqlite_stores


class Sent:
    def __init__(self):
        self.messages = []

    def send(self, queue, message):
        self.messages.append((queue, message.body_bytes()))


def services(tmp_path, content: bytes, calls: list):
    def answer(request):
        calls.append(request)
        return httpx.Response(201, content=content,
                              headers={"content-type": "application/json"})

    clock = ManualClock()
    stores = sqlite_stores(tmp_path, clock)
    for order_id in ("O-1", "O-2"):
        put(stores.states, order_id, ProcessState.PROCESSING, attempt=1)  # held by O-n:1
    return SimpleNamespace(
        settings=Settings(DEVHOST_DATA_DIR=".", PAYMENT_API_URL="http://payment"),
        http=httpx.Client(transport=httpx.MockTransport(answer)),
        breakers=BreakerRegistry(clock=clock), clock=clock, sender=Sent(), stores=stores)


@pytest.mark.parametrize("content", [
    b'{"paymentId": "P-1", "fee": NaN}',
    b'{"paymentId": "P-1", "fee": 1e999}',
    b'{"paymentId": "P-1", "note": "\\ud800"}',
    b'{"paymentId": "P-1", "paymentId": "P-2"}',
])
def test_an_answer_that_is_not_strict_json_still_gives_a_sendable_reply(tmp_path, content):
    calls = []
    svc = services(tmp_path, content, calls)
    request = AgentRequest(message_id="O-1:1:charge", order_key="O-1", instance_id="O-1:1",
                           service="payment", operation="charge",
                           idempotency_key="O-1:charge",
                           complete_by=svc.clock.now() + timedelta(minutes=1), max_attempts=3,
                           event_name="charge-reply", payload={"amount": "1.00"})
    answer = handler.handle(request, svc, sleep=lambda s: None)
    handler.reply(svc, request, answer)
    assert (answer.outcome, answer.result, len(calls)) == (AgentOutcome.SUCCEEDED, None, 1)
    [(queue, body)] = svc.sender.messages
    assert queue == "agent-replies" and b'"outcome":"Succeeded"' in body


def test_a_strict_json_answer_is_the_replys_result(tmp_path):
    calls = []
    svc = services(tmp_path, b'{"paymentId": "P-1", "fee": 0.5}', calls)
    request = AgentRequest(message_id="O-2:1:charge", order_key="O-2", instance_id="O-2:1",
                           service="payment", operation="charge",
                           idempotency_key="O-2:charge",
                           complete_by=svc.clock.now() + timedelta(minutes=1), max_attempts=3,
                           event_name="charge-reply")
    answer = handler.handle(request, svc, sleep=lambda s: None)
    assert answer.result == {"paymentId": "P-1", "fee": 0.5}
