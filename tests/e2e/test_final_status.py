"""A client is always told its order's final status, even when the send fails (S8).

The reply queue refuses the first sends of the final status with a transient error (the
broker busy after the client's own retries). The order still ends as it should, the
orchestration does not fail on the status, and the supervisor sends the status once its
deadline (``status_grace``) has passed: the state record is the outbox.
"""

import pytest

from orders.messaging import MessagingUnavailableError
from orders.models.messages import TERMINAL_STATUS_KINDS
from tests.e2e.harness import ProcessState, key, make_order


def refuse_final_statuses(system, monkeypatch, times: int) -> list[str]:
    """Make the first ``times`` sends of a final status fail; return their MessageIds."""
    sender = system.services.sender
    real_send = sender.send
    refused: list[str] = []

    def send(queue, message):
        final = queue.startswith("replies-") and message.body["status"] in TERMINAL_STATUS_KINDS
        if final and len(refused) < times:
            refused.append(message.message_id)
            raise MessagingUnavailableError(f"{queue}: the broker is busy (injected)")
        real_send(queue, message)

    monkeypatch.setattr(sender, "send", send)
    return refused


def statuses(system, order) -> list[str]:
    return [m["status"] for m in system.replies() if m["orderId"] == order.order_id]


@pytest.mark.parametrize("times", [1, 3])
def test_a_completed_order_is_told_although_its_status_send_failed(make_system, monkeypatch,
                                                                  times):
    system = make_system()
    order = make_order(71)
    refused = refuse_final_statuses(system, monkeypatch, times)
    system.submit(order)
    system.run(600)
    record = system.state(order.order_id)
    assert record.process_state is ProcessState.PROCESSED
    assert record.complete_by is None  # nothing pending any more
    # The workflow's send and (times = 3) the supervisor's first two resends failed; every
    # try carried one MessageId, so a send that did reach the queue could never double it.
    assert len(refused) == times and len(set(refused)) == 1
    assert statuses(system, order) == ["RequestReceived", "OrderCompleted"]
    attempt = system.host.taskhub.get_instance(record.locked_by)
    assert attempt.runtime_status == "Completed" and '"processed"' in attempt.output


def test_a_compensated_order_is_told_although_its_status_send_failed(make_system,
                                                                    monkeypatch):
    declined = make_order(72)
    system = make_system(faults={"payment": {"decline": {key(declined): {
        "status": 402, "reason": "card_declined"}}}})
    refused = refuse_final_statuses(system, monkeypatch, 1)
    system.submit(declined)
    system.run(600)
    record = system.state(declined.order_id)
    assert record.process_state is ProcessState.COMPENSATED and record.complete_by is None
    assert len(refused) == 1
    told = [m for m in system.replies() if m["orderId"] == declined.order_id]
    assert [m["status"] for m in told] == ["RequestReceived", "Compensated"]
    assert "HTTP 402: card_declined" in told[-1]["reason"]
