"""State store contract, run against every backend (see conftest.py)."""

import threading

import pytest
from pydantic import ValidationError
from store_builders import make_record, minutes

from orders.models import ProcessState, StateRecord
from orders.stores import ConflictError, NotFoundError, PreconditionFailedError


def claim(record: StateRecord, instance_id: str, attempt: int) -> StateRecord:
    return record.model_copy(
        update={
            "process_state": ProcessState.PROCESSING,
            "locked_by": instance_id,
            "attempt": attempt,
        }
    )


def test_create_stores_first_version_with_etag(stores, clock):
    outcome = stores.states.create_if_absent(StateRecord.new("ORD-1", "client-a", clock.now()))
    assert outcome.created is True
    assert outcome.record.etag
    stored = stores.states.get("ORD-1")
    assert stored == outcome.record
    assert stored.process_state is ProcessState.PENDING
    assert stored.locked_by is None and stored.failure_count == 0


def test_get_missing_record_returns_none(stores):
    assert stores.states.get("NO-SUCH-ORDER") is None


def test_create_twice_with_same_submission_keeps_one_record(stores, clock):
    first = stores.states.create_if_absent(StateRecord.new("ORD-2", "client-a", clock.now()))
    clock.advance(minutes(1))
    again = stores.states.create_if_absent(StateRecord.new("ORD-2", "client-a", clock.now()))
    assert again.created is False
    assert again.record == first.record
    assert stores.states.count_by_state([ProcessState.PENDING]) == {ProcessState.PENDING: 1}


def test_create_with_other_submission_conflicts_and_keeps_original(stores, clock):
    first = stores.states.create_if_absent(StateRecord.new("ORD-3", "client-a", clock.now()))
    with pytest.raises(ConflictError, match="ORD-3"):
        stores.states.create_if_absent(StateRecord.new("ORD-3", "client-b", clock.now()))
    kept = stores.states.get("ORD-3")
    assert kept.reply_to == "client-a"
    assert kept.etag == first.record.etag


def test_redelivered_submission_after_claim_is_accepted_unchanged(stores, clock):
    created = stores.states.create_if_absent(StateRecord.new("ORD-4", "client-a", clock.now()))
    claimed = stores.states.replace(claim(created.record, "ORD-4:1", 1))
    again = stores.states.create_if_absent(StateRecord.new("ORD-4", "client-a", clock.now()))
    assert again.created is False
    assert again.record == claimed
    assert again.record.process_state is ProcessState.PROCESSING


def test_replace_with_current_etag_returns_new_etag(stores, clock):
    created = stores.states.create_if_absent(StateRecord.new("ORD-5", "client-a", clock.now()))
    clock.advance(minutes(5))
    claimed = stores.states.replace(claim(created.record, "ORD-5:1", 1))
    assert claimed.etag and claimed.etag != created.record.etag
    assert claimed.updated_at == clock.now()
    assert claimed.created_at == created.record.created_at
    assert stores.states.get("ORD-5") == claimed


def test_stale_etag_is_refused_and_other_writers_version_is_kept(stores, clock):
    stores.states.create_if_absent(StateRecord.new("ORD-6", "client-a", clock.now()))
    seen_by_a = stores.states.get("ORD-6")
    seen_by_b = stores.states.get("ORD-6")
    written_by_a = stores.states.replace(claim(seen_by_a, "ORD-6:1", 1))
    with pytest.raises(PreconditionFailedError):
        stores.states.replace(claim(seen_by_b, "ORD-6:2", 2))
    kept = stores.states.get("ORD-6")
    assert kept == written_by_a
    assert kept.locked_by == "ORD-6:1"
    assert kept.etag == written_by_a.etag


def test_replace_missing_record_raises_not_found(stores, clock):
    ghost = StateRecord.new("ORD-GHOST", "client-a", clock.now()).model_copy(
        update={"etag": "no-such-etag"}
    )
    with pytest.raises(NotFoundError):
        stores.states.replace(ghost)


def test_replace_needs_the_etag_read_from_the_store(stores, clock):
    with pytest.raises(ValueError, match="record.etag"):
        stores.states.replace(StateRecord.new("ORD-7", "client-a", clock.now()))


def test_replace_refuses_record_breaking_s2_invariants(stores, clock):
    created = stores.states.create_if_absent(StateRecord.new("ORD-8", "client-a", clock.now()))
    unlocked = created.record.model_copy(update={"process_state": ProcessState.PROCESSING})
    with pytest.raises(ValidationError, match="lockedBy"):
        stores.states.replace(unlocked)
    assert stores.states.get("ORD-8") == created.record


@pytest.mark.timeout(240)
def test_two_concurrent_claims_of_the_same_record_exactly_one_wins(make_stores, clock):
    starters = [make_stores(), make_stores()]  # two independent clients/connections
    winners = []
    for trial in range(100):
        order_key = f"RACE-{trial}"
        starters[0].states.create_if_absent(StateRecord.new(order_key, "client-a", clock.now()))
        barrier = threading.Barrier(2)
        results: list[object] = [None, None]

        def run(slot: int, order_key: str = order_key, barrier=barrier, results=results) -> None:
            store = starters[slot].states
            seen = store.get(order_key)
            barrier.wait()
            try:
                results[slot] = store.replace(claim(seen, f"{order_key}:1", 1))
            except PreconditionFailedError as exc:
                results[slot] = exc

        threads = [threading.Thread(target=run, args=(slot,)) for slot in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        won = [r for r in results if isinstance(r, StateRecord)]
        lost = [r for r in results if isinstance(r, PreconditionFailedError)]
        assert (len(won), len(lost)) == (1, 1), f"trial {trial}: {results}"
        assert starters[1].states.get(order_key).etag == won[0].etag
        winners.append(results.index(won[0]))
    assert len(winners) == 100


def test_find_startable_returns_pending_unlocked_records_whose_hold_has_passed(stores, clock):
    now = clock.now()
    states = stores.states
    states.create_if_absent(make_record("FREE", now))
    states.create_if_absent(make_record("HELD-UNTIL-NOW", now, not_before=now))
    states.create_if_absent(make_record("HELD-1H", now, not_before=now + minutes(60)))
    states.create_if_absent(
        make_record("RUNNING", now, ProcessState.PROCESSING, complete_by=now + minutes(5))
    )
    states.create_if_absent(make_record("FAILED", now, ProcessState.ERROR))
    found = {r.order_key for r in states.find_startable(now, limit=10)}
    assert found == {"FREE", "HELD-UNTIL-NOW"}
    later = clock.advance(minutes(60))
    found = {r.order_key for r in states.find_startable(later, limit=10)}
    assert found == {"FREE", "HELD-UNTIL-NOW", "HELD-1H"}


def test_find_startable_is_bounded_by_limit(stores, clock):
    for i in range(5):
        stores.states.create_if_absent(make_record(f"P-{i}", clock.now()))
    found = stores.states.find_startable(clock.now(), limit=2)
    assert len(found) == 2
    assert {r.process_state for r in found} == {ProcessState.PENDING}


def test_count_by_state_counts_every_state(stores, clock):
    now = clock.now()
    layout = {
        ProcessState.PENDING: 3,
        ProcessState.PROCESSING: 2,
        ProcessState.COMPENSATION_FAILED: 1,
        ProcessState.PROCESSED: 4,
    }
    for state, n in layout.items():
        for i in range(n):
            stores.states.create_if_absent(make_record(f"{state.value}-{i}", now, state))
    counts = stores.states.count_by_state()
    assert counts == {state: layout.get(state, 0) for state in ProcessState}
    assert stores.states.count_by_state([ProcessState.PENDING, ProcessState.PROCESSING]) == {
        ProcessState.PENDING: 3,
        ProcessState.PROCESSING: 2,
    }


def test_count_in_is_the_total_of_the_records_in_any_of_the_states(stores, clock):
    now = clock.now()
    layout = {ProcessState.PENDING: 3, ProcessState.PROCESSING: 2,
              ProcessState.COMPENSATING: 1, ProcessState.PROCESSED: 4}
    for state, n in layout.items():
        for i in range(n):
            stores.states.create_if_absent(make_record(f"{state.value}-{i}", now, state))
    in_flight = [ProcessState.PENDING, ProcessState.PROCESSING, ProcessState.COMPENSATING]
    assert stores.states.count_in(in_flight) == 6
    assert stores.states.count_in(in_flight) == sum(
        stores.states.count_by_state(in_flight).values())
    assert stores.states.count_in([ProcessState.PROCESSED, ProcessState.PROCESSED]) == 4
    assert stores.states.count_in([ProcessState.ERROR]) == 0
    assert stores.states.count_in(ProcessState) == 10


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s, now: s.count_in([]), "states"),
        (lambda s, now: s.count_in(["Pending"]), "states"),
        # None is "all states" for count_by_state only: here it would count finished orders.
        (lambda s, now: s.count_in(None), "states"),
        (lambda s, now: s.count_in(3), "states"),
        (lambda s, now: s.count_in("Pending"), "states"),
        (lambda s, now: s.count_by_state(3), "states"),
        (lambda s, now: s.count_of_client("acme", None, 5), "states"),
        (lambda s, now: s.count_of_client(None, [ProcessState.PENDING], 5), "client_id"),
        (lambda s, now: s.count_of_client("", [ProcessState.PENDING], 5), "client_id"),
        (lambda s, now: s.count_of_client("Acme", [ProcessState.PENDING], 5), "client_id"),
        (lambda s, now: s.count_of_client("a" * 21, [ProcessState.PENDING], 5), "client_id"),
        (lambda s, now: s.count_of_client("acme", [ProcessState.PENDING], True), "limit"),
        (lambda s, now: s.count_of_client("acme", [ProcessState.PENDING], 2.5), "limit"),
        (lambda s, now: s.count_of_client("acme", [ProcessState.PENDING], None), "limit"),
        (lambda s, now: s.count_of_client("acme", [ProcessState.PENDING], "5"), "limit"),
        (lambda s, now: s.count_of_client("acme", [ProcessState.PENDING], 10_001), "limit"),
        (lambda s, now: s.changes_since(now, True), "limit"),
        (lambda s, now: s.changes_since(now, 10_001), "limit"),
        (lambda s, now: s.find_startable(now.replace(tzinfo=None), 1), "now"),
        (lambda s, now: s.find_startable(now, 0), "limit"),
        (lambda s, now: s.find_startable(now, 1001), "limit"),
        (lambda s, now: s.scan_expired(now, minutes(0), 3), "window"),
        (lambda s, now: s.scan_expired(now, minutes(5), 0), "page_size"),
        (lambda s, now: s.count_by_state([]), "states"),
    ],
)
def test_bad_query_arguments_name_the_parameter(stores, clock, call, message):
    with pytest.raises(ValueError, match=message):
        call(stores.states, clock.now())


def test_records_survive_reopening(make_stores, clock):
    first = make_stores()
    created = first.states.create_if_absent(StateRecord.new("ORD-9", "client-a", clock.now()))
    first.close()
    assert make_stores().states.get("ORD-9") == created.record


def test_circuit_refusal_fields_round_trip(stores, clock):
    created = stores.states.create_if_absent(StateRecord.new("ORD-9", "client-a", clock.now()))
    marked = stores.states.replace(claim(created.record, "ORD-9:3", 3).model_copy(
        update={"circuit_refused_by": "ORD-9:3", "circuit_holds": 2}))
    read = stores.states.get("ORD-9")
    assert read == marked
    assert (read.circuit_refused_by, read.circuit_holds) == ("ORD-9:3", 2)


def client_record(client: str, order_id: str, now, state=ProcessState.PENDING, **extra):
    return make_record(f"{client}~{order_id}", now, state, reply_to=f"replies-{client}",
                       client_id=client, client_order_id=order_id, **extra)


def test_count_of_client_counts_only_that_clients_records_in_the_states(stores, clock):
    now = clock.now()
    for i in range(3):
        stores.states.create_if_absent(client_record("shop-a", f"A{i}", now))
    stores.states.create_if_absent(client_record("shop-a", "A-RUN", now, ProcessState.PROCESSING,
                                                 complete_by=now + minutes(5)))
    stores.states.create_if_absent(client_record("shop-a", "A-DONE", now, ProcessState.PROCESSED))
    stores.states.create_if_absent(client_record("shop-b", "B0", now))
    stores.states.create_if_absent(make_record("LEGACY", now))
    in_flight = [ProcessState.PENDING, ProcessState.PROCESSING, ProcessState.COMPENSATING]
    assert stores.states.count_of_client("shop-a", in_flight, limit=100) == 4
    assert stores.states.count_of_client("shop-b", in_flight, limit=100) == 1
    assert stores.states.count_of_client("shop-c", in_flight, limit=100) == 0
    assert stores.states.count_of_client("shop-a", [ProcessState.PROCESSED], limit=100) == 1


def test_count_of_client_stops_at_its_limit_across_its_states(stores, clock):
    now = clock.now()
    for n, state in enumerate([ProcessState.PENDING] * 3 + [ProcessState.PROCESSING] * 3):
        stores.states.create_if_absent(client_record("shop-a", f"A{n}", now, state,
                                                     complete_by=now + minutes(5)))
    both = [ProcessState.PENDING, ProcessState.PROCESSING]
    assert stores.states.count_of_client("shop-a", both, limit=4) == 4
    assert stores.states.count_of_client("shop-a", both, limit=6) == 6
    assert stores.states.count_of_client("shop-a", both, limit=100) == 6


def test_count_of_client_sums_the_work_of_large_orders(stores, clock):
    now = clock.now()
    for order_id in ("BIG-1", "BIG-2"):
        record = client_record("shop-a", order_id, now).model_copy(update={"work": 5})
        stores.states.create_if_absent(record)
    stores.states.create_if_absent(client_record("shop-a", "SMALL", now))
    stores.states.create_if_absent(client_record("shop-b", "B0", now))
    assert stores.states.get("shop-a~BIG-1").work == 5
    assert stores.states.count_of_client("shop-a", [ProcessState.PENDING], limit=100) == 11
    assert stores.states.count_of_client("shop-a", [ProcessState.PENDING], limit=8) == 8
    assert stores.states.count_of_client("shop-b", [ProcessState.PENDING], limit=100) == 1


def test_count_of_client_stops_at_its_limit(stores, clock):
    now = clock.now()
    for i in range(6):
        stores.states.create_if_absent(client_record("shop-a", f"A{i}", now))
    assert stores.states.count_of_client("shop-a", [ProcessState.PENDING], limit=4) == 4
    with pytest.raises(ValueError, match="limit"):
        stores.states.count_of_client("shop-a", [ProcessState.PENDING], limit=0)


def test_find_startable_of_one_client_and_of_legacy_records(stores, clock):
    now = clock.now()
    stores.states.create_if_absent(client_record("shop-a", "A0", now))
    stores.states.create_if_absent(client_record("shop-a", "A1", now))
    stores.states.create_if_absent(client_record("shop-b", "B0", now))
    stores.states.create_if_absent(make_record("LEGACY", now))
    of = lambda c: {r.order_key for r in stores.states.find_startable(now, 10, client_id=c)}  # noqa: E731
    assert of("shop-a") == {"shop-a~A0", "shop-a~A1"}
    assert of("shop-b") == {"shop-b~B0"}
    assert of(None) == {"LEGACY"}
    assert {r.order_key for r in stores.states.find_startable(now, 10)} == {
        "shop-a~A0", "shop-a~A1", "shop-b~B0", "LEGACY"}
