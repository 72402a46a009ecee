"""The fast timestamp path gives the SDK exactly what dateutil gave it."""

from datetime import UTC, datetime, timedelta

from dateutil.parser import parse as dateutil_parse
from hypothesis import given
from hypothesis import strategies as st

from devhost.orchestration import timestamps
from devhost.orchestration.timestamps import parse_timestamp
from devhost.taskhub.events import format_time


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1)))
def test_host_form_parses_to_same_instant_and_same_text(naive):
    when = naive.replace(tzinfo=UTC)
    text = format_time(when)
    fast, slow = parse_timestamp(text), dateutil_parse(text)
    assert fast == slow == when
    assert str(fast) == str(slow)  # new_uuid() hashes str(current_utc_datetime)
    assert fast.utcoffset() == timedelta(0)


def test_other_forms_fall_back_to_dateutil():
    for text in ("2030-01-01T00:00:00Z", "2030-01-01T00:00:00.123+02:00", "2030-01-01"):
        assert parse_timestamp(text) == dateutil_parse(text)


def test_only_the_hosts_form_is_memoised(monkeypatch):
    # dateutil fills a shorter text's missing fields from today's date: ask it every time.
    days = iter([datetime(2030, 1, 1, 12, tzinfo=UTC), datetime(2030, 1, 2, 12, tzinfo=UTC)])
    monkeypatch.setattr(timestamps, "dateutil_parse", lambda text: next(days))
    assert parse_timestamp("12:00:00Z") == datetime(2030, 1, 1, 12, tzinfo=UTC)
    assert parse_timestamp("12:00:00Z") == datetime(2030, 1, 2, 12, tzinfo=UTC)


def test_digits_of_other_scripts_are_not_the_hosts_form():
    text = "\uff12\uff10\uff12\uff14-01-02T03:04:05.123456Z"  # fullwidth 2024
    assert parse_timestamp(text) == dateutil_parse(text)
