import json
from datetime import timedelta

import pytest

from orders.queues import (
    DEFAULT_QUEUES_FILE,
    QueueFileError,
    load_queue_limits,
    parse_duration,
    parse_queue_limits,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("PT30S", timedelta(seconds=30)), ("PT10M", timedelta(minutes=10)),
    ("P14D", timedelta(days=14)), ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3,
                                                              seconds=4.5)),
])
def test_parse_duration_reads_arm_durations(text, expected):
    assert parse_duration(text, "f") == expected


@pytest.mark.parametrize("text", ["", "P", "PT", "30S", "PT5X", 30, "P1DT"])
def test_parse_duration_names_the_field_for_bad_values(text):
    with pytest.raises(QueueFileError, match="queues.x.lockDuration: must be an ISO 8601"):
        parse_duration(text, "queues.x.lockDuration")


def test_defaults_are_merged_like_bicep_union():
    limits = parse_queue_limits({
        "defaults": {"maxDeliveryCount": 5, "requiresDuplicateDetection": True,
                     "lockDuration": "PT30S", "duplicateDetectionHistoryTimeWindow": "PT10M"},
        "queues": {"a": {}, "b": {"maxDeliveryCount": 2, "lockDuration": "PT1M"}}})
    assert limits["a"].max_delivery_count == 5 and limits["a"].lock_duration.seconds == 30
    assert limits["b"].max_delivery_count == 2 and limits["b"].lock_duration.seconds == 60
    assert limits["b"].requires_duplicate_detection
    assert limits["b"].duplicate_detection_window == timedelta(minutes=10)


@pytest.mark.parametrize(("props", "message"), [
    ({"maxDeliveryCount": 0}, "queues.q.maxDeliveryCount: must be an integer >= 1"),
    ({"maxDeliveryCount": True}, "queues.q.maxDeliveryCount"),
    ({"maxDeliveryCount": 3, "requiresDuplicateDetection": "yes"},
     "queues.q.requiresDuplicateDetection: must be true or false"),
])
def test_bad_properties_are_refused_with_their_name(props, message):
    with pytest.raises(QueueFileError, match=message):
        parse_queue_limits({"queues": {"q": props}})


def test_the_repository_file_is_what_the_local_host_reads():
    from azurekit.queues import load_queue_catalog

    ours = load_queue_limits()
    theirs = load_queue_catalog(DEFAULT_QUEUES_FILE)
    for name, limits in ours.items():
        props = theirs.queues[name]
        assert limits.max_delivery_count == props.max_delivery_count
        assert limits.lock_duration == props.lock_duration
        assert limits.requires_duplicate_detection == props.requires_duplicate_detection
        assert limits.duplicate_detection_window == \
            props.duplicate_detection_history_time_window


def test_missing_or_broken_file_is_named(tmp_path):
    with pytest.raises(QueueFileError, match="cannot read"):
        load_queue_limits(tmp_path / "nope.json")
    bad = tmp_path / "queues.json"
    bad.write_text("{")
    with pytest.raises(QueueFileError, match="queues.json: not valid JSON"):
        load_queue_limits(bad)
    bad.write_text(json.dumps({"queues": []}))
    with pytest.raises(QueueFileError, match="must be an object with a 'queues' object"):
        load_queue_limits(bad)
