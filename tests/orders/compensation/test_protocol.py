"""Record transitions of the compensation protocol (SPEC S9, D2)."""

from datetime import timedelta

import pytest

from orders.compensation.protocol import (
    claim,
    compensation_instance_id,
    finish,
    give_up,
    hand_over,
    retry_later,
)
from orders.models import ProcessState, StateRecord
from tests.support.records import record_in


def valid(record: StateRecord) -> StateRecord:
    return StateRecord.model_validate(record.model_dump(mode="json"))


def test_compensation_instance_ids_stay_valid_for_the_longest_order_id():
    longest = "A" * 64
    assert compensation_instance_id(longest, 1) == f"{longest}:comp:1"
    assert len(compensation_instance_id(longest, 99_999)) <= 100
    with pytest.raises(ValueError, match="at least 1"):
        compensation_instance_id("ORD-1", 0)


def test_hand_over_then_claim(stores, clock):
    record = record_in(stores.states, clock)
    handed = valid(hand_over(record, "ship failed permanently: x" * 100))
    assert handed.process_state is ProcessState.COMPENSATING
    assert (handed.locked_by, handed.complete_by, handed.not_before) == (None, None, None)
    assert len(handed.failure_reason) == 1000 and handed.failure_reason.endswith("...")
    claimed = valid(claim(handed, clock.now(), timedelta(seconds=60)))
    assert claimed.locked_by == "ORD-1:comp:1" and claimed.compensation_attempt == 1
    assert claimed.complete_by == clock.now() + timedelta(seconds=60)
    again = claim(retry_later(claimed, 1, clock.now()), clock.now(), timedelta(seconds=60))
    assert again.locked_by == "ORD-1:comp:2"


def test_retry_later_give_up_and_finish(stores, clock):
    running = claim(hand_over(record_in(stores.states, clock), "x"), clock.now(),
                    timedelta(seconds=60))
    later = valid(retry_later(running, 1, clock.now() + timedelta(seconds=2)))
    assert (later.locked_by, later.compensation_failures) == (None, 1)
    assert later.not_before == clock.now() + timedelta(seconds=2) and later.complete_by is None
    failed = valid(give_up(running, 2))
    assert failed.process_state is ProcessState.COMPENSATION_FAILED
    assert failed.locked_by == "ORD-1:comp:1" and failed.compensation_failures == 2
    assert finish(running, ProcessState.COMPENSATED).process_state is ProcessState.COMPENSATED
    with pytest.raises(ValueError, match="Compensated or CompensationFailed"):
        finish(running, ProcessState.ERROR)
