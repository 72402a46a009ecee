"""The fast timestamp path gives the SDK exactly what dateutil gave it."""

from datetime import UTC, datetime, timedelta

from dateutil.parser import parse as dateutil_parse
from hypothesis import given
from hypothesis import strategies as st

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
