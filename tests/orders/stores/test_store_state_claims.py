"""``claim_within``: a starter's claim that never leaves more than ``limit`` Processing (S3).

Run against every backend (see conftest.py): SQLite counts inside the claim's transaction,
Cosmos DB takes a slot of an ETag-fenced slots document first.
"""

import threading

import pytest

from orders.models import ProcessState, StateRecord
from orders.stores import PreconditionFailedError


def pending(stores, clock, order_key):
    record = StateRecord.new(order_key, "client-a", clock.now())
    return stores.states.create_if_absent(record).record


def claim(record, attempt=None):
    attempt = attempt or record.attempt + 1
    return record.model_copy(update={"process_state": ProcessState.PROCESSING,
                                     "locked_by": f"{record.order_key}:{attempt}",
                                     "attempt": attempt})


def processing(stores):
    return stores.states.count_by_state([ProcessState.PROCESSING])[ProcessState.PROCESSING]


def test_a_claim_within_the_limit_is_written_and_one_past_it_is_not(stores, clock):
    first, second = pending(stores, clock, "ORD-1"), pending(stores, clock, "ORD-2")
    won = stores.states.claim_within(claim(first), 1)
    assert won is not None and won.etag != first.etag
    assert stores.states.get("ORD-1") == won
    assert stores.states.claim_within(claim(second), 1) is None
    assert stores.states.get("ORD-2") == second  # nothing written, ETag unchanged
    assert stores.states.claim_within(claim(second), 2).locked_by == "ORD-2:1"
    assert processing(stores) == 2


def test_an_attempt_that_ended_or_returned_to_pending_frees_its_slot(stores, clock):
    first, second = pending(stores, clock, "ORD-1"), pending(stores, clock, "ORD-2")
    running = stores.states.claim_within(claim(first), 1)
    returned = stores.states.replace(running.model_copy(update={
        "process_state": ProcessState.PENDING, "locked_by": None}))  # the supervisor's retry
    again = stores.states.claim_within(claim(returned), 1)
    assert again.locked_by == "ORD-1:2"
    assert stores.states.claim_within(claim(second), 1) is None
    stores.states.replace(again.model_copy(update={"process_state": ProcessState.PROCESSED,
                                                   "locked_by": None}))
    assert stores.states.claim_within(claim(second), 1).locked_by == "ORD-2:1"


def test_a_stale_claim_is_refused_and_keeps_no_slot(stores, clock):
    record, other = pending(stores, clock, "ORD-1"), pending(stores, clock, "ORD-2")
    stores.states.replace(record)  # another writer: the ETag the claim read is stale
    with pytest.raises(PreconditionFailedError):
        stores.states.claim_within(claim(record), 1)
    assert stores.states.get("ORD-1").process_state is ProcessState.PENDING
    assert stores.states.claim_within(claim(other), 1).locked_by == "ORD-2:1"
    assert processing(stores) == 1


def test_claim_within_names_a_bad_argument(stores, clock):
    record = pending(stores, clock, "ORD-1")
    with pytest.raises(ValueError, match="record: a claim must be Processing"):
        stores.states.claim_within(record, 1)
    with pytest.raises(ValueError, match="limit: must be an int from 1 to 10000"):
        stores.states.claim_within(claim(record), 0)
    assert stores.states.get("ORD-1") == record


@pytest.mark.timeout(240)
def test_concurrent_claims_from_several_clients_never_pass_the_limit(make_stores, clock):
    starters = [make_stores() for _ in range(6)]  # independent clients/connections
    mine = [[pending(starters[0], clock, f"ORD-{n}-{k}") for k in range(3)]
            for n in range(len(starters))]
    # A timeout, so a starter that dies fails the test instead of leaving the others waiting.
    barrier = threading.Barrier(len(starters), timeout=60)
    won, seen, fenced = [], [], []

    def run(stores, records):
        for record in records:  # each its own records: races only for the limit's slots
            barrier.wait()
            try:
                if stores.states.claim_within(claim(record), 3) is not None:
                    won.append(record.order_key)
            except PreconditionFailedError:
                # Cosmos DB: a claim that finds every slot taken frees one whose claim is
                # still on its way by rewriting that record (cosmos_slots), so that claim
                # fails as a lost race, as the starter counts it; its slot went to another.
                fenced.append(record.order_key)
            seen.append(processing(stores))

    threads = [threading.Thread(target=run, args=(s, r)) for s, r in
               zip(starters, mine, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 3 * len(starters), "a starter stopped before its last claim"
    assert len(won) == 3 and len(set(won)) == 3 and not set(won) & set(fenced)
    assert max(seen) == 3 and processing(starters[0]) == 3
