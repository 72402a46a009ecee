"""The supervisor's part in compensation: hand over, resume, give up (V2, V3, S9)."""

from datetime import timedelta

from orders.lifecycle.changes import claim_compensation, hand_over
from orders.lifecycle.transitions import Actor
from orders.models import ProcessState
from orders.names import OPERATOR_ALERTS_QUEUE
from supervisor.supervisor import ScanReport, recover, supervise
from tests.support.records import RESERVE, entry, record_in


def expire(clock, seconds=31):
    clock.advance(timedelta(seconds=seconds))


def test_giving_up_hands_the_order_over_when_its_log_has_steps_to_undo(services, stores,
                                                                     clock, sender):
    record_in(stores.states, clock, failure_count=2)
    stores.compensation.record(entry(RESERVE, clock.now()))
    expire(clock)
    report = supervise(services)
    assert report.gave_up == report.handed_over == ["ORD-1"]
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.COMPENSATING and stored.locked_by is None
    assert stored.failure_count == 3 and "MAX_FAILURES=3" in stored.failure_reason
    assert [a["kind"] for a in sender.bodies(OPERATOR_ALERTS_QUEUE)] == ["RetriesExhausted"]
    assert sender.bodies("replies-acme") == []  # the compensation tells the client later


def test_giving_up_with_nothing_to_undo_sets_error_and_tells_the_client(services, stores,
                                                                       clock, sender):
    record_in(stores.states, clock, failure_count=2)
    expire(clock)
    report = supervise(services)
    assert report.gave_up == ["ORD-1"] and report.handed_over == []
    assert stores.states.get("ORD-1").process_state is ProcessState.ERROR
    assert [m["status"] for m in sender.bodies("replies-acme")] == ["OrderFailed"]


def test_a_resubmitted_order_that_fails_again_is_told_again(services, stores, clock, sender):
    # The status MessageId names the attempt, so the queue's duplicate detection does not
    # drop the second OrderFailed of the same order.
    from orders.lifecycle.changes import resubmit

    record_in(stores.states, clock, failure_count=2)
    expire(clock)
    supervise(services)
    failed = stores.states.get("ORD-1")
    stores.states.replace(resubmit(failed).model_copy(update={
        "process_state": ProcessState.PROCESSING, "attempt": 2, "locked_by": "ORD-1:2",
        "failure_count": 2, "complete_by": clock.now() + timedelta(seconds=30)}))
    expire(clock)
    supervise(services)
    sent = [m for q, m in sender.sent if q == "replies-acme"]
    assert [m.body["status"] for m in sent] == ["OrderFailed", "OrderFailed"]
    assert len({m.message_id for m in sent}) == 2


def compensating(stores, clock, failures=0, order_key="ORD-1"):
    handed = stores.states.replace(hand_over(
        record_in(stores.states, clock, order_key=order_key), "ship refused", Actor.SUPERVISOR))
    claimed = claim_compensation(handed, clock.now() + timedelta(seconds=20))
    return stores.states.replace(claimed.model_copy(update={"compensation_failures": failures}))


def test_stalled_compensation_is_handed_back_below_its_own_limit(services, stores, clock,
                                                                sender):
    compensating(stores, clock)
    expire(clock, 21)
    report = supervise(services)
    assert report.compensation_retried == ["ORD-1"] and report.retried == []
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.COMPENSATING and stored.locked_by is None
    assert (stored.compensation_failures, stored.failure_count) == (1, 0)
    assert stored.not_before == clock.now() + timedelta(seconds=1)
    assert stored.complete_by is None
    assert stores.states.find_startable(clock.now() + timedelta(seconds=1), 5,
                                        ProcessState.COMPENSATING) == [stored]
    assert sender.sent == []


def test_stalled_compensation_fails_at_its_limit_with_alert_and_status(services, stores, clock,
                                                                      sender):
    compensating(stores, clock, failures=1)  # MAX_COMPENSATION_FAILURES is 2 here
    expire(clock, 21)
    report = supervise(services)
    assert report.compensation_gave_up == ["ORD-1"]
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.COMPENSATION_FAILED
    assert stored.compensation_failures == 2
    (alert,) = sender.bodies(OPERATOR_ALERTS_QUEUE)
    assert alert["kind"] == "CompensationFailed" and alert["instanceId"] == "ORD-1:comp:1"
    assert "ship refused" in alert["reason"] and "MAX_COMPENSATION_FAILURES=2" in alert["reason"]
    assert [m["status"] for m in sender.bodies("replies-acme")] == ["CompensationFailed"]


def test_waiting_or_running_compensations_are_left_alone(services, stores, clock):
    waiting = stores.states.replace(hand_over(record_in(stores.states, clock), "why",
                                              Actor.SUPERVISOR))
    running = compensating(stores, clock, order_key="ORD-2")
    expire(clock, 10)  # before the running attempt's CompleteBy
    assert supervise(services).expired == 0
    assert (stores.states.get("ORD-1"), stores.states.get("ORD-2")) == (waiting, running)


def test_two_supervisors_recover_a_stalled_compensation_once(services, stores, clock):
    running = compensating(stores, clock)
    expire(clock, 21)
    first, second = ScanReport(), ScanReport()
    recover(running, services, first)
    recover(running, services, second)  # read the same version: its ETag is stale now
    assert (first.compensation_retried, second.skipped) == (["ORD-1"], 1)
    assert stores.states.get("ORD-1").compensation_failures == 1
