"""The statements each embedded store operation runs (the trips of the local host).

Each test counts with SQLite's trace callback (one call per statement, BEGIN and COMMIT
included) what one operation runs alone, and checks what it answered, so a cut in the
count never changes what the port promises (the contract suite checks the rest).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from clocks import ManualClock
from orders.models import CompensationEntry, ProcessState, StateRecord
from orders.stores.errors import ConflictError, NotFoundError, PreconditionFailedError
from orders.stores.sqlite_compensation import SqliteCompensationLog
from orders.stores.sqlite_state import SqliteStateStore
from tests.support.records import CHARGE, SHIP


@contextmanager
def statements(store: Any) -> Iterator[list[str]]:
    """Collect the statements ``store``'s connection runs inside the block."""
    seen: list[str] = []
    store._db.conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._db.conn.set_trace_callback(None)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def states(tmp_path, clock) -> Iterator[SqliteStateStore]:
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=clock)
    yield store
    store.close()


def claim_of(record: StateRecord, instance: str) -> StateRecord:
    return record.model_copy(update={"process_state": ProcessState.PROCESSING,
                                     "locked_by": instance, "attempt": record.attempt + 1})


def test_a_state_record_is_created_by_one_insert(states, clock):
    with statements(states) as seen:
        created = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now()))
    assert created.created
    assert [s.split(" ")[0] for s in seen] == ["INSERT"]
    assert states.get("O-1") == created.record


@pytest.mark.parametrize("write", ["replace", "claim"])
def test_a_conditional_write_that_succeeds_is_one_update(states, clock, write):
    record = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now())).record
    changed = claim_of(record, "O-1:1")
    with statements(states) as seen:
        stored = (states.replace(changed) if write == "replace"
                  else states.claim_within(changed, 5))
    assert [s.split(" ")[0] for s in seen] == ["UPDATE"]
    assert stored is not None and stored.etag != record.etag
    assert states.get("O-1") == stored


@pytest.mark.parametrize(("case", "expected"), [
    ("stale", PreconditionFailedError), ("missing", NotFoundError), ("full", None)])
def test_a_conditional_write_that_fails_reads_once_to_say_why(states, clock, case, expected):
    # A stale ETag is 412 and a missing record 404, as on Cosmos DB; a claim with no free
    # slot writes nothing and returns None. Each: the UPDATE, then one read of the ETag.
    busy = states.create_if_absent(StateRecord.new("O-0", "replies-acme", clock.now())).record
    states.replace(claim_of(busy, "O-0:1"))
    record = states.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now())).record
    if case == "stale":
        states.replace(record.model_copy(update={"failure_count": 1}))
    changed = claim_of(record, "O-1:1")
    if case == "missing":
        changed = changed.model_copy(update={"order_key": "O-9"})
    with statements(states) as seen:
        if expected is None:
            assert states.claim_within(changed, 1) is None
        else:
            with pytest.raises(expected):
                states.claim_within(changed, 1)
    assert [s.split(" ")[0] for s in seen] == ["UPDATE", "SELECT"]
    assert states.get("O-1").process_state is ProcessState.PENDING
    assert states.count_by_state([ProcessState.PROCESSING]) == {ProcessState.PROCESSING: 1}


@pytest.fixture
def log(tmp_path) -> Iterator[SqliteCompensationLog]:
    store = SqliteCompensationLog(tmp_path / "state.sqlite")
    yield store
    store.close()


def entry(clock: ManualClock, details: dict[str, Any], order_key: str = "O-1"
          ) -> CompensationEntry:
    return CompensationEntry.new(order_key, details, instance_id=f"{order_key}:1",
                                 workflow_version=3, now=clock.now())


def kinds(seen: list[str]) -> list[str]:
    return [s.split(" ")[0] for s in seen]


def test_a_log_entry_is_one_insert_that_numbers_it(log, clock):
    charge, ship = entry(clock, {**CHARGE, "step": "charge"}), entry(clock, SHIP)
    with statements(log) as seen:
        first = log.record(charge)
        second = log.record(ship)
    assert kinds(seen) == ["INSERT", "INSERT"]
    assert [(first.created, first.record.seq), (second.created, second.record.seq)] == [
        (True, 1), (True, 2)]
    assert log.entries("O-1") == [first.record, second.record]  # seq in each document too


def test_a_logged_step_is_one_insert_that_does_nothing_and_one_read(log, clock):
    charge = entry(clock, {**CHARGE, "step": "charge"})
    log.record(charge)
    other = entry(clock, {**CHARGE, "step": "charge", "amount": "1.00"})
    with statements(log) as seen:
        again = log.record(charge)
        with pytest.raises(ConflictError):
            log.record(other)
    assert kinds(seen) == ["INSERT", "SELECT", "INSERT", "SELECT"]
    assert (again.created, again.record.seq) == (False, 1)
    assert log.entries("O-1") == [again.record]


def test_entries_recorded_together_are_one_insert_each_in_one_transaction(log, clock):
    log.record(entry(clock, {**CHARGE, "step": "charge"}, "O-2"))  # another order's seq
    with statements(log) as seen:
        done = log.record_all([entry(clock, {**CHARGE, "step": "charge"}),
                               entry(clock, SHIP)])
    assert kinds(seen) == ["BEGIN", "INSERT", "INSERT", "COMMIT"]
    assert [(c.created, c.record.seq) for c in done] == [(True, 1), (True, 2)]
