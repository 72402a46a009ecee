"""Snapshots of the state store, on every backend (see conftest.py).

The ops snapshot timer saves the summary; the dashboard reads it with one point read, so a
call costs the same however many records the store holds.
"""

from store_builders import make_record

from orders.models import ProcessState


def test_a_snapshot_reads_back_as_saved_and_the_last_save_wins(stores, clock):
    assert stores.states.load_snapshot("ops-summary") is None
    first = {"at": "2030-01-01T00:00:00.000000Z", "counts": {"Pending": 2}, "inFlight": 2}
    stores.states.save_snapshot("ops-summary", first)
    assert stores.states.load_snapshot("ops-summary") == first
    second = {**first, "counts": {"Pending": 0, "Processed": 2}, "inFlight": 0}
    stores.states.save_snapshot("ops-summary", second)
    assert stores.states.load_snapshot("ops-summary") == second
    assert stores.states.load_snapshot("other") is None


def test_a_snapshot_is_not_a_state_record(stores, clock):
    stores.states.create_if_absent(make_record("ORD-1", clock.now()))
    stores.states.save_snapshot("ops-summary", {"counts": {}})
    assert stores.states.count_by_state(None)[ProcessState.PENDING] == 1
    assert sum(stores.states.count_by_state(None).values()) == 1
    assert [r.order_key for r in stores.states.find_by_state(ProcessState.PENDING, 10).records] == [
        "ORD-1"]
