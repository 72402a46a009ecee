"""State store queries of the compensation protocol, run against every backend (S9)."""

import pytest
from store_builders import make_record, minutes

from orders.models import STATE_SCHEMA_VERSION, ProcessState, StateRecord


def handed_over(record: StateRecord, **changes) -> StateRecord:
    return record.model_copy(update={"process_state": ProcessState.COMPENSATING,
                                     "locked_by": None, "complete_by": None,
                                     "failure_reason": "ship failed permanently", **changes})


def test_find_startable_compensating_returns_only_unlocked_handed_over_records(stores, clock):
    now = clock.now()
    states = stores.states
    for order_key in ("C-1", "C-2", "C-3", "P-1"):
        states.create_if_absent(StateRecord.new(order_key, "client-a", now))
    for order_key, changes in (("C-1", {}), ("C-2", {"not_before": now + minutes(5)}),
                              ("C-3", {"locked_by": "C-3:comp:1"})):
        states.replace(handed_over(states.get(order_key), **changes))
    found = states.find_startable(now, 10, ProcessState.COMPENSATING)
    assert [r.order_key for r in found] == ["C-1"]
    assert [r.order_key for r in states.find_startable(now, 10)] == ["P-1"]
    later = states.find_startable(now + minutes(6), 10, ProcessState.COMPENSATING)
    assert sorted(r.order_key for r in later) == ["C-1", "C-2"]


def test_find_startable_refuses_other_states(stores, clock):
    with pytest.raises(ValueError, match="state: must be one of Pending, Compensating"):
        stores.states.find_startable(clock.now(), 10, ProcessState.PROCESSING)


def test_compensation_fields_round_trip(stores, clock):
    states = stores.states
    created = states.create_if_absent(StateRecord.new("C-4", "client-a", clock.now())).record
    stored = states.replace(handed_over(created, compensation_attempt=2,
                                        compensation_failures=1))
    read = states.get("C-4")
    assert read == stored
    assert (read.compensation_attempt, read.compensation_failures) == (2, 1)
    assert read.failure_reason == "ship failed permanently"
    assert read.schema_version == STATE_SCHEMA_VERSION


def test_find_by_state_pages_through_one_state(stores, clock):
    now = clock.now()
    states = stores.states
    failed = [f"F-{i}" for i in range(5)]
    for order_key in failed:
        record = states.create_if_absent(StateRecord.new(order_key, "client-a", now)).record
        states.replace(record.model_copy(update={
            "process_state": ProcessState.COMPENSATION_FAILED, "locked_by": f"{order_key}:comp:1"}))
    states.create_if_absent(make_record("OTHER", now))
    seen, token, pages = [], None, 0
    while True:
        page = states.find_by_state(ProcessState.COMPENSATION_FAILED, 2, token)
        pages += 1
        seen += [r.order_key for r in page.records]
        token = page.continuation
        if not page.records or token is None:
            break
    assert sorted(seen) == failed
    assert pages >= 3
    assert all(r.process_state is ProcessState.COMPENSATION_FAILED
               for r in states.find_by_state(ProcessState.COMPENSATION_FAILED, 10).records)
    assert states.find_by_state(ProcessState.COMPENSATED, 10).records == ()
