"""Timer schedules: NCRONTAB (seconds first) and TimeSpan next occurrences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from croniter import croniter
from hypothesis import given, settings
from hypothesis import strategies as st

from devhost.triggers.schedule import Schedule, ScheduleError

EXPRESSIONS = ["*/5 * * * * *", "0 * * * * *", "0 0 3 * * 1", "30 15 */2 1 1-6 *",
               "0 30 9 * * 1-5"]


@settings(max_examples=200, deadline=None)
@given(expression=st.sampled_from(EXPRESSIONS),
       when=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1),
                         timezones=st.just(UTC)))
def test_ncrontab_next_is_the_first_occurrence_after(expression: str, when: datetime) -> None:
    schedule = Schedule(expression)
    expected = croniter(expression, when, second_at_beginning=True).get_next(datetime)
    assert schedule.next_after(when) == expected
    assert schedule.next_after(when) > when  # the parsed expression is reused, unchanged


def test_reused_schedule_answers_each_time_from_the_time_given() -> None:
    schedule = Schedule("0 0 * * * *")
    late = datetime(2026, 12, 2, 10, 30, tzinfo=UTC)
    early = datetime(2026, 12, 2, 1, 59, 59, tzinfo=UTC)
    assert schedule.next_after(late) == datetime(2026, 12, 2, 11, 0, tzinfo=UTC)
    assert schedule.next_after(early) == datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
    assert schedule.next_after(datetime(2026, 12, 2, 2, 0, tzinfo=UTC)) == datetime(
        2026, 12, 2, 3, 0, tzinfo=UTC)


def test_timespan_adds_its_interval() -> None:
    when = datetime(2026, 12, 2, tzinfo=UTC)
    assert Schedule("1.02:03:04").next_after(when) == when + timedelta(
        days=1, hours=2, minutes=3, seconds=4)


@pytest.mark.parametrize(("expression", "rule"), [
    ("* * * * *", "six fields"), ("61 * * * * *", "not a valid NCRONTAB"),
    ("00:00:00", "TimeSpan must be positive")])
def test_malformed_schedule_names_expression_and_rule(expression: str, rule: str) -> None:
    with pytest.raises(ScheduleError, match=rule) as caught:
        Schedule(expression)
    assert expression in str(caught.value)
