"""The newest-first reads of the state store, on every backend (see conftest.py).

``find_recent`` (the dashboard's lists of Compensated, CompensationFailed and Error orders)
and ``changes_since`` (its charts) answer the latest ``updatedAt`` first and at most
``limit`` records, whatever else the store holds.
"""

from datetime import timedelta

import pytest
from store_builders import make_record, minutes

from orders.models import ProcessState
from orders.stores.ports import StateChange


def end_in(stores, clock, order_key, state, *, after_minutes=1.0):
    """Advance the clock, then create a record and move it to ``state`` at that time."""
    clock.advance(minutes(after_minutes))
    created = stores.states.create_if_absent(make_record(order_key, clock.now())).record
    return stores.states.replace(created.model_copy(update={"process_state": state}))


def test_find_recent_answers_one_state_latest_change_first_up_to_the_limit(stores, clock):
    for n in range(5):
        end_in(stores, clock, f"COMP-{n}", ProcessState.COMPENSATED)
    end_in(stores, clock, "FAILED-1", ProcessState.COMPENSATION_FAILED)
    end_in(stores, clock, "DONE-1", ProcessState.PROCESSED)
    recent = stores.states.find_recent(ProcessState.COMPENSATED, 3)
    assert [r.order_key for r in recent] == ["COMP-4", "COMP-3", "COMP-2"]
    assert recent[0] == stores.states.get("COMP-4")
    assert [r.order_key for r in stores.states.find_recent(
        ProcessState.COMPENSATION_FAILED, 10)] == ["FAILED-1"]
    assert stores.states.find_recent(ProcessState.ERROR, 10) == []


@pytest.mark.parametrize("state, limit, says", [
    ("Compensated", 1, "not a ProcessState"),
    (ProcessState.COMPENSATED, 0, "limit"),
    (ProcessState.COMPENSATED, 1001, "limit"),
])
def test_find_recent_refuses_bad_arguments(stores, state, limit, says):
    with pytest.raises(ValueError, match=says):
        stores.states.find_recent(state, limit)


def test_changes_since_answers_every_state_latest_first_and_nothing_older(stores, clock):
    end_in(stores, clock, "OLD", ProcessState.PROCESSED)
    since = clock.advance(timedelta(hours=1))
    a = end_in(stores, clock, "A", ProcessState.PROCESSED)
    b = end_in(stores, clock, "B", ProcessState.COMPENSATED, after_minutes=10)
    clock.advance(minutes(5))
    pending = stores.states.create_if_absent(make_record("C", clock.now())).record
    changes = stores.states.changes_since(since, 10)
    assert changes == [
        StateChange(ProcessState.PENDING, pending.created_at, pending.updated_at),
        StateChange(ProcessState.COMPENSATED, b.created_at, b.updated_at),
        StateChange(ProcessState.PROCESSED, a.created_at, a.updated_at),
    ]
    assert stores.states.changes_since(since, 2) == changes[:2]
    assert stores.states.changes_since(clock.now() + minutes(1), 10) == []


def test_changes_since_refuses_a_naive_time_and_a_limit_out_of_range(stores, clock):
    with pytest.raises(ValueError, match="timezone-aware"):
        stores.states.changes_since(clock.now().replace(tzinfo=None), 10)
    with pytest.raises(ValueError, match="limit"):
        stores.states.changes_since(clock.now(), 10_001)
