"""The supervisor's scan (V1): bounded window, bounded pages, continuation tokens."""

from collections import Counter

import pytest
from store_builders import make_record, minutes

from orders.models import SUPERVISED_STATES, ProcessState
from orders.stores import ScanPage, iter_expired_pages

WINDOW = minutes(60)


def seed(states, now):
    """9 expired records in 9 partitions, plus records the scan must not return."""
    expired = []
    for i in range(9):
        state = ProcessState.COMPENSATING if i % 3 == 0 else ProcessState.PROCESSING
        order_key = f"EXP-{i}"
        states.create_if_absent(make_record(order_key, now, state,
                                            complete_by=now - minutes(i + 1)))
        expired.append(order_key)
    others = [
        make_record("DUE-LATER", now, ProcessState.PROCESSING, complete_by=now + minutes(1)),
        make_record("DUE-NOW", now, ProcessState.PROCESSING, complete_by=now),
        make_record("TOO-OLD", now, ProcessState.PROCESSING, complete_by=now - minutes(61)),
        make_record("EDGE-OF-WINDOW", now, ProcessState.PROCESSING, complete_by=now - WINDOW),
        make_record("DONE", now, ProcessState.PROCESSED, complete_by=now - minutes(2)),
        make_record("FAILED", now, ProcessState.ERROR, complete_by=now - minutes(2)),
        make_record("WAITING", now, ProcessState.PENDING),
    ]
    for record in others:
        states.create_if_absent(record)
    return expired + ["EDGE-OF-WINDOW"]


def test_scan_returns_each_expired_record_exactly_once_in_pages_of_three(stores, clock):
    now = clock.now()
    expected = seed(stores.states, now)
    assert len(expected) == 10
    pages = list(iter_expired_pages(stores.states, now, WINDOW, page_size=3))
    seen = Counter(r.order_key for page in pages for r in page.records)
    assert seen == Counter(expected)
    assert all(len(page.records) <= 3 for page in pages)
    assert pages[-1].records == () or pages[-1].continuation is None
    assert len(pages) <= 5  # 10 records / 3 per page, plus at most one empty page
    for page in pages:
        if page.rows_read is not None:  # SQLite: rows read == rows returned
            assert page.rows_read == len(page.records)
        else:  # Cosmos DB: request units charged for the page
            assert page.request_charge > 0


def test_scan_window_and_states_select_records(stores, clock):
    now = clock.now()
    seed(stores.states, now)
    pages = iter_expired_pages(
        stores.states, now, minutes(3), page_size=10, states=(ProcessState.PROCESSING,)
    )
    found = {r.order_key for page in pages for r in page.records}
    # CompleteBy in [now - 3 min, now): EXP-0 (-1 min, Compensating) is excluded by state
    assert found == {"EXP-1", "EXP-2"}


def test_following_tokens_by_hand_ends(stores, clock):
    now = clock.now()
    expected = seed(stores.states, now)
    token, collected, calls = None, [], 0
    while True:
        page = stores.states.scan_expired(now, WINDOW, 4, continuation=token)
        calls += 1
        collected += [r.order_key for r in page.records]
        if not page.records or page.continuation is None:
            break
        token = page.continuation
        assert calls < 10
    assert sorted(collected) == sorted(expected)


def seed_overdue(states, now):
    """7 overdue records (CompleteBy before the window) among records that are not."""
    overdue = []
    for i in range(7):
        state = ProcessState.COMPENSATING if i % 3 == 0 else ProcessState.PROCESSING
        order_key = f"OLD-{i}"
        states.create_if_absent(make_record(order_key, now, state,
                                            complete_by=now - WINDOW - minutes(1 + i * 600)))
        overdue.append(order_key)
    waiting = make_record("WAITING-COMP", now, ProcessState.COMPENSATING)
    for record in [
        make_record("IN-WINDOW", now, ProcessState.PROCESSING, complete_by=now - minutes(5)),
        make_record("EDGE-OF-WINDOW", now, ProcessState.PROCESSING, complete_by=now - WINDOW),
        make_record("DUE-LATER", now, ProcessState.PROCESSING, complete_by=now + minutes(1)),
        make_record("OLD-DONE", now, ProcessState.PROCESSED, complete_by=now - minutes(900)),
        make_record("OLD-FAILED", now, ProcessState.ERROR, complete_by=now - minutes(900)),
        waiting.model_copy(update={"locked_by": None}),  # no CompleteBy: waits for a start
    ]:
        states.create_if_absent(record)
    return overdue


def test_overdue_scan_returns_each_record_before_the_window_exactly_once(stores, clock):
    now = clock.now()
    expected = seed_overdue(stores.states, now)
    pages = list(iter_expired_pages(stores.states, now, WINDOW, page_size=3, overdue=True))
    seen = Counter(r.order_key for page in pages for r in page.records)
    assert seen == Counter(expected)
    assert all(len(page.records) <= 3 for page in pages) and len(pages) <= 4
    for page in pages:
        if page.rows_read is not None:  # SQLite: rows read == rows returned
            assert page.rows_read == len(page.records)
        else:  # Cosmos DB: request units charged for the page
            assert page.request_charge > 0
    # The two scans split the expired records between them, without overlap.
    in_window = {r.order_key for page in iter_expired_pages(stores.states, now, WINDOW, 10)
                 for r in page.records}
    assert in_window == {"IN-WINDOW", "EDGE-OF-WINDOW"}


def test_overdue_scan_selects_states_and_follows_tokens_by_hand(stores, clock):
    now = clock.now()
    seed_overdue(stores.states, now)
    token, collected = None, []
    for _ in range(10):
        page = stores.states.scan_overdue(now, WINDOW, 2, continuation=token,
                                          states=(ProcessState.PROCESSING,))
        collected += [r.order_key for r in page.records]
        if not page.records or page.continuation is None:
            break
        token = page.continuation
    assert sorted(collected) == ["OLD-1", "OLD-2", "OLD-4", "OLD-5"]


@pytest.mark.parametrize(("call", "name"), [
    (lambda s, now: s.scan_overdue(now, minutes(0), 3), "window"),
    (lambda s, now: s.scan_overdue(now, minutes(5), 0), "page_size"),
    (lambda s, now: s.scan_overdue(now.replace(tzinfo=None), minutes(5), 3), "now"),
])
def test_overdue_scan_refuses_bad_arguments(stores, clock, call, name):
    with pytest.raises(ValueError, match=name):
        call(stores.states, clock.now())


def test_scan_of_empty_store_returns_one_empty_page(stores, clock):
    pages = list(iter_expired_pages(stores.states, clock.now(), WINDOW, page_size=3))
    assert len(pages) == 1
    assert pages[0].records == ()


class ScriptedStore:
    """Serves prepared pages and records the tokens it was asked with."""

    def __init__(self, pages):
        self.pages = list(pages)
        self.tokens = []

    def scan_expired(self, now, window, page_size, continuation=None, states=SUPERVISED_STATES):
        self.tokens.append(continuation)
        return self.pages.pop(0)


def test_iteration_stops_on_empty_page_even_if_it_carries_a_token(clock):
    record = make_record("EXP-1", clock.now(), ProcessState.PROCESSING, complete_by=clock.now())
    store = ScriptedStore(
        [
            ScanPage(records=(record,), continuation="t1"),
            ScanPage(records=(), continuation="t2"),
            ScanPage(records=(record,), continuation=None),  # must never be requested
        ]
    )
    pages = list(iter_expired_pages(store, clock.now(), WINDOW, page_size=1))
    assert [len(p.records) for p in pages] == [1, 0]
    assert store.tokens == [None, "t1"]


def test_iteration_is_bounded_by_max_pages(clock):
    record = make_record("EXP-1", clock.now(), ProcessState.PROCESSING, complete_by=clock.now())
    store = ScriptedStore([ScanPage(records=(record,), continuation="again")] * 10)
    pages = list(iter_expired_pages(store, clock.now(), WINDOW, page_size=1, max_pages=3))
    assert len(pages) == 3
    with pytest.raises(ValueError, match="max_pages"):
        list(iter_expired_pages(store, clock.now(), WINDOW, page_size=1, max_pages=0))
