"""Fast-fails of an open circuit are held back, not counted against MAX_FAILURES (A5, V2)."""

from datetime import timedelta

from orders.lifecycle.changes import claim_compensation, hand_over
from orders.lifecycle.transitions import Actor
from orders.models import ProcessState
from orders.models.messages import AgentOutcome, AgentReply
from orders.names import OPERATOR_ALERTS_QUEUE
from scheduler.replies import mark_circuit_refusal
from supervisor.supervisor import circuit_hold_of, supervise
from tests.supervisor.conftest import running


def refused(instance_id, order_key="ORD-1", circuit_open=True, attempts=0, operation="charge"):
    return AgentReply(message_id=f"{instance_id}:{operation}:reply", order_key=order_key,
                      instance_id=instance_id, operation=operation,
                      event_name=f"{operation}-reply",
                      outcome=AgentOutcome.TRANSIENT_FAILURE, tries=attempts,
                      circuit_open=circuit_open, reason="circuit of payment is open")


def expire(clock, seconds=31):
    clock.advance(timedelta(seconds=seconds))


def test_refused_attempt_is_held_back_with_failure_count_unchanged(services, stores, clock,
                                                                  sender):
    running(stores.states, clock, failure_count=2)  # one more failure would give up
    assert mark_circuit_refusal(stores.states, refused("ORD-1:1"))
    expire(clock)
    report = supervise(services)
    assert (report.held_back, report.retried, report.gave_up) == (["ORD-1"], [], [])
    record = stores.states.get("ORD-1")
    assert (record.process_state, record.locked_by) == (ProcessState.PENDING, None)
    assert (record.failure_count, record.circuit_holds) == (2, 1)
    hold = record.not_before - clock.now()
    assert hold == circuit_hold_of("ORD-1", 1, services.settings)
    assert timedelta(seconds=2.5) <= hold <= timedelta(seconds=5)  # CIRCUIT_COOL_DOWN_S = 5
    assert record.complete_by == record.not_before
    assert stores.states.find_startable(clock.now(), 5) == []
    assert stores.states.find_startable(record.not_before, 5) == [record]
    assert sender.sent == []  # nothing failed: no alert, no status


def test_hold_back_grows_with_each_refusal_up_to_the_cap(services, stores, clock):
    holds = []
    for attempt in range(1, 11):
        running(stores.states, clock, attempt=attempt, failure_count=1)
        mark_circuit_refusal(stores.states, refused(f"ORD-1:{attempt}"))
        expire(clock)
        supervise(services)
        record = stores.states.get("ORD-1")
        assert (record.failure_count, record.circuit_holds) == (1, attempt)
        holds.append((record.not_before - clock.now()).total_seconds())
        clock.set(record.not_before)
    # 5 s cool-down doubling per refusal, each spread over its upper half: 5, 10, 20, 40 ...
    bounds = [(2.5, 5), (5, 10), (10, 20), (20, 40)]
    assert all(lo <= h <= hi for (lo, hi), h in zip(bounds, holds[:4], strict=True)), holds
    assert holds[:4] == sorted(holds[:4])  # never shorter than the one before
    assert all(30 <= h <= 60 for h in holds[4:])  # ... until CIRCUIT_HOLD_MAX_S = 60 caps it


def test_hold_back_is_spread_over_orders_refused_together(services):
    spread = {circuit_hold_of(f"ORD-{n}", 3, services.settings) for n in range(20)}
    assert len(spread) == 20
    assert all(timedelta(seconds=10) <= h <= timedelta(seconds=20) for h in spread)


def test_mark_of_an_earlier_attempt_does_not_count(services, stores, clock):
    running(stores.states, clock, attempt=1)
    mark_circuit_refusal(stores.states, refused("ORD-1:1"))
    running(stores.states, clock, attempt=2)  # attempt 2 timed out on its own
    expire(clock)
    report = supervise(services)
    assert (report.retried, report.held_back) == (["ORD-1"], [])
    record = stores.states.get("ORD-1")
    assert (record.failure_count, record.circuit_holds) == (1, 0)


def test_only_a_reply_refused_before_any_call_of_the_owning_attempt_is_marked(stores, clock):
    running(stores.states, clock, attempt=2)
    before = stores.states.get("ORD-1")
    assert not mark_circuit_refusal(stores.states, refused("ORD-1:2", circuit_open=False,
                                                           attempts=3))
    assert not mark_circuit_refusal(stores.states, refused("ORD-1:1"))  # stale attempt
    assert stores.states.get("ORD-1") == before
    assert mark_circuit_refusal(stores.states, refused("ORD-1:2"))
    assert stores.states.get("ORD-1").circuit_refused_by == "ORD-1:2"


def test_an_attempt_refused_after_an_earlier_remote_step_is_not_marked(services, stores,
                                                                        clock):
    # Version 1 charges, then ships: refused at the shipment, the attempt had charged, and
    # a new attempt would charge again. Held back uncounted, a long shipping outage would
    # charge without end; counted, the retry budget holds (X2).
    running(stores.states, clock, workflow_version=1)
    assert not mark_circuit_refusal(stores.states, refused("ORD-1:1", operation="ship"))
    expire(clock)
    report = supervise(services)
    assert (report.held_back, report.retried) == ([], ["ORD-1"])
    assert stores.states.get("ORD-1").failure_count == 1
    # Version 2 ships first: refused there, the attempt called nothing and is held back.
    running(stores.states, clock, order_key="ORD-2", workflow_version=2)
    assert mark_circuit_refusal(stores.states, refused("ORD-2:1", "ORD-2", operation="ship"))
    assert not mark_circuit_refusal(stores.states, refused("ORD-2:1", "ORD-2"))


def test_a_finished_record_is_not_marked(stores, clock):
    record = running(stores.states, clock)
    done = stores.states.replace(record.model_copy(update={
        "process_state": ProcessState.PROCESSED, "complete_by": None}))
    assert not mark_circuit_refusal(stores.states, refused("ORD-1:1"))
    assert stores.states.get("ORD-1") == done


def test_refused_compensation_attempt_is_held_back_without_a_compensation_failure(
        services, stores, clock, sender):
    handed = stores.states.replace(hand_over(running(stores.states, clock), "ship refused",
                                             Actor.SUPERVISOR))
    claimed = claim_compensation(handed, clock.now() + timedelta(seconds=20))
    stores.states.replace(claimed.model_copy(
        update={"compensation_failures": 1}))  # MAX_COMPENSATION_FAILURES is 2 here
    assert mark_circuit_refusal(stores.states, refused("ORD-1:comp:1"))
    expire(clock, 21)
    report = supervise(services)
    assert (report.held_back, report.compensation_gave_up) == (["ORD-1"], [])
    record = stores.states.get("ORD-1")
    assert (record.process_state, record.locked_by) == (ProcessState.COMPENSATING, None)
    assert (record.compensation_failures, record.circuit_holds) == (1, 1)
    assert record.not_before - clock.now() == circuit_hold_of("ORD-1", 1, services.settings)
    assert sender.bodies(OPERATOR_ALERTS_QUEUE) == []
