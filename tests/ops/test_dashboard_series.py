"""The dashboard's last-hour series, from state records' createdAt and updatedAt."""

from datetime import UTC, datetime, timedelta

from ops.dashboard.series import minute_series, read_records
from orders.models import ProcessState, StateRecord

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def record(order_id, state, created_min_ago, updated_min_ago):
    made = StateRecord.new(order_id, "replies-acme", NOW - timedelta(minutes=created_min_ago))
    return made.model_copy(update={"process_state": state,
                                   "updated_at": NOW - timedelta(minutes=updated_min_ago)})


def test_terminal_orders_count_in_their_minute_and_in_flight_until_then():
    records = [
        record("A", ProcessState.PROCESSED, 10.5, 5.5),   # in flight minutes -10..-6
        record("B", ProcessState.COMPENSATED, 3.2, 0.2),  # done in the last minute
        record("C", ProcessState.PROCESSING, 2.5, 2.5),   # still in flight
        record("D", ProcessState.PROCESSED, 120, 90),     # before the window
        record("E", ProcessState.PENDING, 600, 600),      # waiting since long ago
    ]
    series = minute_series(records, NOW)
    assert len(series["minutes"]) == len(series["terminal"]) == 60
    assert series["minutes"][-1] == "2030-01-01T12:00:00.000000Z"
    terminal = series["terminal"]
    assert sum(terminal) == 2 and terminal[54] == 1 and terminal[59] == 1
    in_flight = series["inFlight"]
    assert in_flight[-1] == 2  # C and E at the end of the last minute
    assert in_flight[48] == 1  # end of minute -11: only E
    assert in_flight[49:54] == [2] * 5  # A from -10.5 until -5.5
    assert in_flight[54:56] == [1, 1]  # ends -5 and -4: A done at -5.5
    assert in_flight[56] == 2  # end -3: B (from -3.2)
    assert in_flight[57:59] == [3, 3]  # ends -2 and -1: C (from -2.5) too; B until -0.2


def test_the_charts_read_every_state_and_say_when_they_stopped(stores, clock):
    for n in range(5):
        stores.states.create_if_absent(StateRecord.new(f"ORD-{n}", "replies-acme",
                                                       clock.now()))
    records, truncated = read_records(stores.states)
    assert len(records) == 5 and not truncated
    records, truncated = read_records(stores.states, limit=3)
    assert len(records) == 3 and truncated
