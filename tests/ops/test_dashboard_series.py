"""The dashboard's last-hour series, from the last hour's changes and the in-flight count."""

from datetime import UTC, datetime, timedelta

from ops.dashboard import series
from ops.dashboard.series import charts, minute_series
from orders.models import ProcessState, StateRecord, format_utc
from orders.stores.ports import StateChange

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def change(state, created_min_ago, updated_min_ago):
    return StateChange(state, NOW - timedelta(minutes=created_min_ago),
                       NOW - timedelta(minutes=updated_min_ago))


CHANGES = [  # newest first, as changes_since answers
    change(ProcessState.COMPENSATED, 3.2, 0.2),  # done in the last minute
    change(ProcessState.PROCESSING, 2.5, 2.5),   # still in flight
    change(ProcessState.PROCESSED, 10.5, 5.5),   # in flight minutes -10..-6
]
"""Besides these, one order Pending since long ago (no change in the window): in flight."""


def test_terminal_orders_count_in_their_minute_and_in_flight_until_then():
    result = minute_series(CHANGES, NOW, in_flight_now=2)
    assert len(result["minutes"]) == len(result["terminal"]) == 60
    assert result["minutes"][-1] == "2030-01-01T12:00:00.000000Z"
    terminal = result["terminal"]
    assert sum(terminal) == 2 and terminal[54] == 1 and terminal[59] == 1
    in_flight = result["inFlight"]
    assert in_flight[-1] == 2  # the Processing one and the old Pending one
    assert in_flight[48] == 1  # end of minute -11: only the old Pending one
    assert in_flight[49:54] == [2] * 5  # the Processed one from -10.5 until -5.5
    assert in_flight[54:56] == [1, 1]  # ends -5 and -4: it is done at -5.5
    assert in_flight[56] == 2  # end -3: the Compensated one (from -3.2)
    assert in_flight[57:59] == [3, 3]  # ends -2 and -1: the Processing one too


def test_points_before_the_oldest_change_read_are_unknown():
    result = minute_series(CHANGES[:2], NOW, 2, covered_from=NOW - timedelta(minutes=2.5))
    assert result["inFlight"][:57] == [None] * 57 and result["inFlight"][57:] == [3, 3, 2]
    assert result["terminal"][:58] == [None] * 58 and result["terminal"][58:] == [0, 1]


def test_the_charts_read_the_newest_changes_once_and_say_when_they_stopped(
        stores, clock, monkeypatch):
    for n in range(5):
        stores.states.create_if_absent(StateRecord.new(f"ORD-{n}", "replies-acme",
                                                       clock.now()))
        clock.advance(timedelta(minutes=1))
    shown = charts(stores.states, clock.now(), in_flight_now=5)
    assert not shown["truncated"] and shown["changesRead"] == 5
    assert shown["inFlight"][-7:] == [0, 1, 2, 3, 4, 5, 5]  # ends t0 - 1 min .. t0 + 5 min
    monkeypatch.setattr(series, "CHANGES_READ", 3)
    shown = charts(stores.states, clock.now(), in_flight_now=5)
    assert shown["truncated"] and shown["changesRead"] == 3
    assert shown["coveredFrom"] == format_utc(stores.states.get("ORD-2").updated_at)
    assert shown["inFlight"][-4:] == [3, 4, 5, 5] and shown["inFlight"][-5] is None
