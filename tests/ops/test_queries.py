import pytest

from clocks import ManualClock
from ops.queries import LISTS, count_stuck, list_by_state, list_stuck
from orders.models import ProcessState
from tests.support.stores import put, sqlite_stores


@pytest.fixture
def seeded(tmp_path):
    clock = ManualClock()
    stores = sqlite_stores(tmp_path, clock)
    states = stores.states
    for n in range(5):
        put(states, f"ERR-{n}", ProcessState.ERROR, attempt=3, failures=3)
    put(states, "CF-1", ProcessState.COMPENSATION_FAILED, attempt=1)
    put(states, "LATE-1", ProcessState.PROCESSING, attempt=1, complete_in_s=-10)
    put(states, "LATE-2", ProcessState.COMPENSATING, attempt=1, complete_in_s=-1)
    put(states, "ANCIENT", ProcessState.PROCESSING, attempt=1, complete_in_s=-5 * 86400)
    put(states, "ONTIME", ProcessState.PROCESSING, attempt=1, complete_in_s=20)
    put(states, "NEW", ProcessState.PENDING)
    yield clock, states
    stores.close()


def test_list_by_state_pages_through_all_and_flags_more(seeded):
    _, states = seeded
    records, more = list_by_state(states, ProcessState.ERROR, 3)
    assert len(records) == 3 and more
    records, more = list_by_state(states, ProcessState.ERROR, 5)
    assert sorted(r.order_key for r in records) == [f"ERR-{n}" for n in range(5)] and not more
    records, more = list_by_state(states, ProcessState.COMPENSATION_FAILED, 50)
    assert [r.order_key for r in records] == ["CF-1"] and not more


def test_stuck_means_supervised_with_complete_by_passed_however_long_ago(seeded):
    clock, states = seeded
    records, more = list_stuck(states, clock.now(), 50)
    # ANCIENT expired five days ago: outside the supervisor's one-day window, still stuck.
    assert sorted(r.order_key for r in records) == ["ANCIENT", "LATE-1", "LATE-2"]
    assert not more
    assert count_stuck(states, clock.now()) == (3, False)
    assert count_stuck(states, clock.now(), cap=2) == (2, True)
    assert list_stuck(states, clock.now(), 2)[1] is True


def test_the_cli_names_map_to_queries(seeded):
    clock, states = seeded
    assert set(LISTS) >= {"stuck", "error", "compensationfailed", "pending"}
    records, _ = LISTS["pending"](states, clock.now(), 10)
    assert [r.order_key for r in records] == ["NEW"]


def test_an_operator_lists_one_clients_orders(seeded):
    clock, states = seeded
    for client_id in ("acme", "globex"):
        put(states, "ERR-0", ProcessState.ERROR, attempt=3, failures=3, client_id=client_id)
        put(states, "LATE-9", ProcessState.PROCESSING, attempt=1, complete_in_s=-10,
            client_id=client_id)
    records, more = list_by_state(states, ProcessState.ERROR, 1, client="acme")
    assert [(r.order_key, r.client_id, r.client_order_id) for r in records] == [
        ("acme~ERR-0", "acme", "ERR-0")] and not more
    assert [r.order_key for r in LISTS["stuck"](states, clock.now(), 50, "globex")[0]] == [
        "globex~LATE-9"]
    # Without a client: every client's and the legacy records of the shared-queue era.
    assert len(list_by_state(states, ProcessState.ERROR, 50)[0]) == 7
    assert list_by_state(states, ProcessState.ERROR, 50, client="initech") == ([], False)


@pytest.mark.parametrize("limit", [0, 1001, True])
def test_limit_is_bounded(seeded, limit):
    clock, states = seeded
    with pytest.raises(ValueError, match="limit: must be an int from 1 to 1000"):
        list_stuck(states, clock.now(), limit)


@pytest.mark.parametrize("limit, shown, more", [(2, 2, True), (5, 5, False), (1000, 5, False)])
def test_list_recent_tells_whether_there_are_more_at_every_limit(seeded, limit, shown, more):
    from ops.queries import list_recent

    _, states = seeded
    records, found_more = list_recent(states, ProcessState.ERROR, limit)
    assert (len(records), found_more) == (shown, more)
    assert {r.process_state for r in records} == {ProcessState.ERROR}
    assert [r.updated_at for r in records] == sorted((r.updated_at for r in records),
                                                     reverse=True)
