"""What only the SQLite adapter promises: indexes used, rows read, token checks, wiring."""

import pytest
from store_builders import make_record, minutes

from clocks import ManualClock
from orders.models import ProcessState
from orders.stores import StoreError, create_stores
from orders.stores.sqlite_state import SqliteStateStore


@pytest.fixture
def store(tmp_path):
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=ManualClock())
    yield store
    store.close()


def test_both_scans_search_an_index_instead_of_scanning_the_table(store):
    plans = store.query_plans()
    assert plans["startable"] == [
        "SEARCH state_records USING INDEX ix_state_startable (process_state=? AND not_before<?)"
    ]
    assert plans["expired"] == plans["overdue"] == [
        "SEARCH state_records USING INDEX ix_state_deadline "
        "(process_state=? AND complete_by>? AND complete_by<?)"
    ]


def test_the_dashboards_newest_first_reads_search_one_index_range(store):
    plans = store.query_plans()
    # No sort step: the index range is read backwards, ``limit`` entries at most.
    assert plans["recent"] == [
        "SEARCH state_records USING INDEX ix_state_recent (process_state=?)"]
    assert plans["changes"] == [
        "SEARCH state_records USING COVERING INDEX ix_state_recent "
        "(process_state=? AND updated_at>?)"]


def test_admissions_counts_read_an_index_range_per_state_in_one_query(store):
    plans = store.query_plans()
    # The IN list becomes one equality search per state on the index: no table scan.
    assert plans["count_of_client"] == [
        "CO-ROUTINE (subquery-1)",
        "SEARCH state_records USING COVERING INDEX ix_state_client "
        "(client_id=? AND process_state=?)",
        "SCAN (subquery-1)"]
    assert plans["count_in"] == [
        "SEARCH state_records USING COVERING INDEX ix_state_by_state (process_state=?)"]


def test_scan_reads_the_expired_rows_not_the_table(store):
    now = ManualClock().now()
    for i in range(300):
        store.create_if_absent(
            make_record(f"LATER-{i}", now, ProcessState.PROCESSING, complete_by=now + minutes(5))
        )
        store.create_if_absent(make_record(f"DONE-{i}", now, ProcessState.PROCESSED))
    for i in range(7):
        store.create_if_absent(
            make_record(f"EXP-{i}", now, ProcessState.PROCESSING, complete_by=now - minutes(1))
        )
    page = store.scan_expired(now, minutes(60), page_size=100)
    assert len(page.records) == 7
    assert page.rows_read == 7
    assert page.continuation is None


def overdue_scan_steps(store, now):
    """Rows the overdue scan returns, and the SQLite VM steps it took (its real work)."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    store._db.conn.set_progress_handler(count, 1)
    try:
        page = store.scan_overdue(now, minutes(60), page_size=100)
    finally:
        store._db.conn.set_progress_handler(None, 1)
    return page, steps


def test_overdue_scan_work_grows_with_the_overdue_rows_not_the_table(store):
    now = ManualClock().now()
    for i in range(5):
        store.create_if_absent(
            make_record(f"OLD-{i}", now, ProcessState.PROCESSING, complete_by=now - minutes(90))
        )
    page, few_rows_steps = overdue_scan_steps(store, now)
    assert (len(page.records), page.rows_read) == (5, 5)
    for i in range(2000):
        store.create_if_absent(
            make_record(f"LATER-{i}", now, ProcessState.PROCESSING, complete_by=now + minutes(5))
        )
        store.create_if_absent(
            make_record(f"RECENT-{i}", now, ProcessState.PROCESSING, complete_by=now - minutes(1))
        )
        store.create_if_absent(
            make_record(f"DONE-{i}", now, ProcessState.PROCESSED, complete_by=now - minutes(90))
        )
    page, many_rows_steps = overdue_scan_steps(store, now)
    assert (len(page.records), page.rows_read) == (5, 5)
    # 6,000 more rows, none of them overdue: the work stays that of the 5 overdue rows.
    assert many_rows_steps <= few_rows_steps * 1.2, (few_rows_steps, many_rows_steps)


def test_continuation_token_from_elsewhere_is_rejected(store):
    now = ManualClock().now()
    with pytest.raises(ValueError, match="continuation"):
        store.scan_expired(now, minutes(5), 3, continuation="not-a-token")


def test_token_for_other_states_is_rejected(store):
    now = ManualClock().now()
    for i in range(2):
        store.create_if_absent(
            make_record(f"C-{i}", now, ProcessState.COMPENSATING, complete_by=now - minutes(1))
        )
    page = store.scan_expired(now, minutes(5), 1, states=(ProcessState.COMPENSATING,))
    assert page.continuation is not None
    with pytest.raises(ValueError, match="continuation"):
        store.scan_expired(
            now, minutes(5), 1, continuation=page.continuation, states=(ProcessState.PROCESSING,)
        )


def test_stores_live_in_their_own_files(tmp_path):
    stores = create_stores(
        "sqlite", orders_path=tmp_path / "o.sqlite", state_path=tmp_path / "s.sqlite"
    )
    stores.close()
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == ["o.sqlite", "s.sqlite"]


def test_unreadable_file_raises_store_error(tmp_path):
    path = tmp_path / "state.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError):
        SqliteStateStore(path)


@pytest.mark.parametrize(
    ("backend", "settings", "message"),
    [
        ("sqlite", {"orders_path": "o.sqlite"}, "state_path"),
        ("cosmos", {"endpoint": "https://x"}, "database"),
        ("mongo", {}, "backend"),
    ],
)
def test_factory_names_missing_settings(backend, settings, message):
    with pytest.raises(ValueError, match=message):
        create_stores(backend, **settings)


def test_record_all_is_one_transaction_a_crash_in_it_leaves_no_entry(tmp_path, monkeypatch):
    import orders.stores.sqlite_compensation as sqlite_log
    from orders.models import CompensationEntry
    from orders.stores.sqlite_compensation import SqliteCompensationLog
    from tests.support.records import CHARGE, SHIP

    clock = ManualClock()
    log = SqliteCompensationLog(tmp_path / "state.sqlite")
    entries = [CompensationEntry.new("ORD-1", details, instance_id="ORD-1:1",
                                     workflow_version=3, now=clock.now())
               for details in ({**CHARGE, "step": "charge"}, SHIP)]
    inserted = sqlite_log._insert
    calls = []

    def crash_on_second(conn, *args):
        calls.append(args)
        if len(calls) == 2:
            raise StoreError("the process died here")
        return inserted(conn, *args)

    monkeypatch.setattr(sqlite_log, "_insert", crash_on_second)
    with pytest.raises(StoreError, match="died"):
        log.record_all(entries)
    assert log.entries("ORD-1") == []  # the first insert was rolled back with it
    monkeypatch.setattr(sqlite_log, "_insert", inserted)
    assert [(c.created, c.record.seq) for c in log.record_all(entries)] == [(True, 1), (True, 2)]
    log.close()


def test_two_replaces_with_one_etag_in_one_batch_the_second_is_refused(tmp_path):
    # Group commit (sqlitekit.group_commit): both conditional replaces run in one
    # transaction, in queue order; the second sees the first's new ETag, as it would alone.
    from clocks import ManualClock
    from orders.models import StateRecord
    from orders.stores.errors import PreconditionFailedError
    from orders.stores.sqlite_state import SqliteStateStore
    from tests.support.batches import Batch

    clock = ManualClock()
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=clock)
    created = store.create_if_absent(StateRecord.new("O-1", "replies-acme", clock.now())).record
    first = created.model_copy(update={"failure_count": 1})
    second = created.model_copy(update={"failure_count": 2})
    results = Batch(store._db._group).calls([
        lambda: store.replace(first), lambda: store.replace(second)])
    assert results[0].failure_count == 1
    assert isinstance(results[1], PreconditionFailedError)
    assert store.get("O-1").failure_count == 1
    store.close()
