"""Recovery by the supervisor: timer wins, late replies, giving up (S6, V1-V4, A3, A4)."""

from tests.e2e.checks import assert_timer_won_and_late_reply_changed_nothing, declined_order
from tests.e2e.harness import ProcessState, key, make_order


def test_held_request_timer_wins_supervisor_retries_and_late_reply_changes_nothing(make_system):
    system = make_system()
    order = make_order(11)
    system.submit(order)
    with system.paused("payment-requests"):
        system.run(1.5)  # submitted, claimed, attempt 1 sent its payment request
        held = system.engine.receive("payment-requests", 1, lock_owner="crashed-agent")
    assert len(held) == 1 and held[0].message_id == f"{key(order)}:1:charge"
    # The agent holding the request "crashed": attempt 1's timer at CompleteBy wins.
    system.run(31)
    record = system.state(order.order_id)
    assert record.failure_count == 1, record
    system.run(20)
    record = system.state(order.order_id)
    assert record.process_state == ProcessState.PROCESSED
    assert record.attempt == 2 and record.locked_by == f"{key(order)}:2"
    # The lock expires: the held request is redelivered, the agent replies late.
    assert_timer_won_and_late_reply_changed_nothing(system, f"{key(order)}:1", record,
                                                    "charge", 60)
    statuses = [m["status"] for m in system.replies()]
    assert statuses == ["RequestReceived", "OrderCompleted"]


def test_remote_never_answering_one_order_is_given_up_and_compensated_with_one_alert(
        make_system):
    doomed = make_order(12)
    system = make_system(faults={"payment": {"black_hole_order_ids": [key(doomed)]}},
                         settings={"AGENT_MAX_ATTEMPTS": "2", "AGENT_CALL_TIMEOUT_S": "0.2"})
    others = [make_order(n) for n in range(20, 30)]
    for order in [doomed, *others]:
        system.submit(order)
    system.run(200)
    # Given up at MAX_FAILURES; the reservation was undone (S9), so: Compensated.
    assert system.state(doomed.order_id).process_state == ProcessState.COMPENSATED
    assert system.state(doomed.order_id).failure_count == 3
    assert system.states(o.order_id for o in others) == {ProcessState.PROCESSED: 10}
    alerts = system.alerts()
    assert [(a["kind"], a["orderId"]) for a in alerts] == [("RetriesExhausted",
                                                           key(doomed))]
    statuses = [m["status"] for m in system.replies() if m["orderId"] == doomed.order_id]
    assert statuses == ["RequestReceived", "Compensated"]
    assert len(system.effects(order_id=doomed.order_id)) == 0


def test_permanent_decline_alerts_compensates_and_tells_client(make_system):
    system, declined = declined_order(make_system, 13, 10)
    record = system.state(declined.order_id)
    # The reservation made before the charge is released (S9), so: Compensated.
    assert record.process_state == ProcessState.COMPENSATED and record.failure_count == 0
    alerts = system.alerts()
    # Only an error code the catalogue declares safe reaches the alert (X10).
    assert alerts[0]["kind"] == "OrderError"
    assert "HTTP 402: card_declined" in alerts[0]["reason"]
    assert [m["status"] for m in system.replies()] == ["RequestReceived", "Compensated"]
