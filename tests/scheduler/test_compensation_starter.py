"""The compensation starter: claim, then start, one attempt per claim (S3, S9, V4)."""

import asyncio
from datetime import timedelta

from orders.lifecycle.changes import hand_over
from orders.lifecycle.transitions import Actor
from orders.models import ProcessState
from orders.names import COMPENSATION_WORKFLOW
from scheduler.compensation_starter import start_compensations
from tests.support.durable_client import StartRecorder as DurableClient
from tests.support.records import record_in


def handed_over(stores, clock, order_key="ORD-1", **changes):
    record = record_in(stores.states, clock, order_key=order_key)
    handed = hand_over(record, "why", Actor.SUPERVISOR)
    return stores.states.replace(handed.model_copy(update=changes))


def test_claims_then_starts_the_next_compensation_attempt(services, stores, clock):
    handed_over(stores, clock)
    client = DurableClient()
    report = asyncio.run(start_compensations(client, services))
    assert (report.claimed, report.started, report.lost_races) == (1, 1, 0)
    assert client.started == [(COMPENSATION_WORKFLOW, "ORD-1:comp:1", {
        "orderId": "ORD-1", "workflowVersion": 1, "compensationVersion": 2, "deadlineS": 20.0,
        "agentMaxAttempts": 3})]
    stored = stores.states.get("ORD-1")
    assert stored.process_state is ProcessState.COMPENSATING
    assert (stored.locked_by, stored.compensation_attempt) == ("ORD-1:comp:1", 1)
    assert stored.complete_by == clock.now() + timedelta(seconds=60)
    assert asyncio.run(start_compensations(client, services)).claimed == 0


def test_held_back_records_wait_and_pending_orders_are_not_touched(services, stores, clock):
    handed_over(stores, clock, not_before=clock.now() + timedelta(seconds=4))
    record_in(stores.states, clock, ProcessState.PENDING, order_key="ORD-2")
    client = DurableClient()
    assert asyncio.run(start_compensations(client, services)).claimed == 0
    clock.advance(timedelta(seconds=4))
    assert asyncio.run(start_compensations(client, services)).claimed == 1
    assert [iid for _, iid, _ in client.started] == ["ORD-1:comp:1"]
    assert stores.states.get("ORD-2").locked_by is None


class Snapshot:
    """A state store whose find_startable answers what was read before (a slower starter)."""

    def __init__(self, states, found):
        self._states, self._found = states, found

    def find_startable(self, now, limit, state=ProcessState.PENDING):
        return self._found

    def __getattr__(self, name):
        return getattr(self._states, name)


def test_two_starters_with_the_same_read_start_one_attempt(services, stores, clock):
    handed_over(stores, clock)
    seen = stores.states.find_startable(clock.now(), 5, ProcessState.COMPENSATING)
    client = DurableClient()
    assert asyncio.run(start_compensations(client, services)).started == 1
    slow = type(services)(**{**vars(services), "stores": type(stores)(
        orders=stores.orders, states=Snapshot(stores.states, seen),
        compensation=stores.compensation, inventory=stores.inventory)})
    report = asyncio.run(start_compensations(client, slow))
    assert (report.claimed, report.lost_races) == (0, 1)
    assert len(client.started) == 1


def test_a_claim_whose_start_fails_is_left_for_the_supervisor(services, stores, clock):
    handed_over(stores, clock)
    report = asyncio.run(start_compensations(DurableClient(fail=True), services))
    assert (report.claimed, report.started) == (1, 0)
    stored = stores.states.get("ORD-1")
    assert stored.locked_by == "ORD-1:comp:1"
    assert stored.complete_by == clock.now() + timedelta(seconds=60)  # the supervisor's cue
