import pytest

from ops.resubmit import ResubmitOutcome, resubmit
from orders.models import ProcessState
from orders.stores import PreconditionFailedError
from tests.support.stores import put, sqlite_stores


@pytest.fixture
def states(tmp_path):
    stores = sqlite_stores(tmp_path)
    yield stores.states
    stores.close()


def test_error_goes_back_to_pending_unlocked_with_failures_reset(states, readings):
    put(states, "ORD-1", ProcessState.ERROR, attempt=3, failures=3, complete_in_s=-5)
    result = resubmit(states, "ORD-1", operator="alice", reason="fixed")
    assert result.outcome is ResubmitOutcome.RESUBMITTED and result.next_attempt == 4
    record = states.get("ORD-1")
    assert record.process_state is ProcessState.PENDING
    assert (record.locked_by, record.failure_count, record.complete_by, record.not_before) == \
        (None, 0, None, None)
    assert record.attempt == 3  # the starter makes it 4 when it claims the record
    assert states.find_startable(record.updated_at, 10) == [record]
    assert readings.points()["orders.resubmissions"] == {(("outcome", "resubmitted"),): 1}


def test_second_call_changes_nothing_and_says_why(states):
    put(states, "ORD-2", ProcessState.ERROR, attempt=1)
    assert resubmit(states, "ORD-2").outcome is ResubmitOutcome.RESUBMITTED
    before = states.get("ORD-2")
    again = resubmit(states, "ORD-2")
    assert again.outcome is ResubmitOutcome.NOT_IN_ERROR
    assert again.state is ProcessState.PENDING and "Pending, not Error" in again.message
    assert states.get("ORD-2") == before


@pytest.mark.parametrize("state", [ProcessState.PROCESSING, ProcessState.PROCESSED,
                                   ProcessState.COMPENSATION_FAILED])
def test_only_error_is_resubmitted(states, state):
    before = put(states, "ORD-3", state, attempt=2, complete_in_s=30)
    assert resubmit(states, "ORD-3").outcome is ResubmitOutcome.NOT_IN_ERROR
    assert states.get("ORD-3") == before


def test_unknown_order_is_reported(states):
    result = resubmit(states, "ORD-404")
    assert result.outcome is ResubmitOutcome.NOT_FOUND and result.state is None


class RacingStore:
    """Another operator's resubmission lands between our read and our write."""

    def __init__(self, states):
        self.states = states
        self.raced = False

    def get(self, order_key):
        return self.states.get(order_key)

    def replace(self, record):
        if not self.raced:
            self.raced = True
            resubmit(self.states, record.order_key, operator="bob")
        return self.states.replace(record)


def test_concurrent_resubmissions_start_one_attempt(states):
    put(states, "ORD-4", ProcessState.ERROR, attempt=2)
    racing = RacingStore(states)
    result = resubmit(racing, "ORD-4", operator="alice")
    assert racing.raced
    assert result.outcome is ResubmitOutcome.NOT_IN_ERROR
    assert states.get("ORD-4").process_state is ProcessState.PENDING


class AlwaysChanging:
    def __init__(self, states):
        self.states = states

    def get(self, order_key):
        return self.states.get(order_key)

    def replace(self, record):
        raise PreconditionFailedError("stale")


def test_a_record_that_keeps_changing_is_not_resubmitted(states):
    put(states, "ORD-5", ProcessState.ERROR, attempt=1)
    with pytest.raises(PreconditionFailedError, match="kept changing"):
        resubmit(AlwaysChanging(states), "ORD-5")
    assert states.get("ORD-5").process_state is ProcessState.ERROR
