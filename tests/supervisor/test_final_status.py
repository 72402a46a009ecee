"""The supervisor tells a client the final status a failed send left pending (S8).

A final state is written with CompleteBy set, the deadline of telling the client; the
sender clears it once the status went out. A record in a final state whose CompleteBy
passed is the outbox the supervisor drains: it resends the status (same MessageId) and
notes it, or, if the send fails again, puts the next try off by ``status_grace``.
"""

from datetime import timedelta

import pytest

from orders.messaging import MessagingUnavailableError
from orders.models import ProcessState
from supervisor.supervisor import supervise
from tests.supervisor.conftest import running


@pytest.fixture
def busy_replies(sender, monkeypatch):
    """Sends to ``replies-acme`` fail while ``busy["on"]``; the tries are counted."""
    real_send = sender.send
    busy = {"on": True, "tries": 0}

    def send(queue, message):
        if queue == "replies-acme":
            busy["tries"] += 1
            if busy["on"]:
                raise MessagingUnavailableError("replies-acme: the broker is busy (injected)")
        real_send(queue, message)

    monkeypatch.setattr(sender, "send", send)
    return busy


def test_an_order_given_up_while_its_reply_queue_is_busy_is_told_later(
        services, stores, clock, sender, busy_replies):
    running(stores.states, clock, failure_count=2, deadline_s=-1)
    assert supervise(services).gave_up == ["ORD-1"]
    record = stores.states.get("ORD-1")
    grace = services.settings.status_grace
    assert record.process_state is ProcessState.ERROR
    assert record.complete_by == clock.now() + grace  # the status is pending
    assert sender.bodies("replies-acme") == []

    clock.advance(grace + timedelta(seconds=1))
    report = supervise(services)  # still busy: the next try is put off
    assert report.told == [] and busy_replies["tries"] == 2
    assert stores.states.get("ORD-1").complete_by == clock.now() + grace

    busy_replies["on"] = False
    clock.advance(grace / 2)
    assert supervise(services).told == []  # not due yet
    clock.advance(grace)
    assert supervise(services).told == ["ORD-1"]
    (status,) = sender.bodies("replies-acme")
    assert (status["orderId"], status["status"]) == ("ORD-1", "OrderFailed")
    assert "MAX_FAILURES=3" in status["reason"]
    assert stores.states.get("ORD-1").complete_by is None
    clock.advance(grace * 10)
    assert supervise(services).expired == 0  # told once; nothing left behind


def test_a_status_sent_at_once_leaves_nothing_for_the_supervisor(services, stores, clock,
                                                                  sender, busy_replies):
    busy_replies["on"] = False
    running(stores.states, clock, failure_count=2, deadline_s=-1)
    supervise(services)
    assert stores.states.get("ORD-1").complete_by is None
    clock.advance(services.settings.status_grace * 2)
    assert supervise(services).expired == 0
    assert [m["status"] for m in sender.bodies("replies-acme")] == ["OrderFailed"]
