import copy
import json
from datetime import timedelta

import pytest

from azurekit.queues import load_queue_catalog
from orders.queues import (
    DEFAULT_QUEUES_FILE,
    QueueFileError,
    load_queue_limits,
    parse_queue_limits,
)

REPOSITORY_DOC = json.loads(DEFAULT_QUEUES_FILE.read_text(encoding="utf-8"))


def doc(defaults=None, **queues):
    data = copy.deepcopy(REPOSITORY_DOC)
    data["defaults"].update(defaults or {})
    data["queues"] = queues
    return data


def test_defaults_are_merged_like_bicep_union():
    limits = parse_queue_limits(doc(
        {"maxDeliveryCount": 5, "requiresDuplicateDetection": True, "lockDuration": "PT30S",
         "duplicateDetectionHistoryTimeWindow": "PT10M"},
        a={}, b={"maxDeliveryCount": 2, "lockDuration": "PT1M"}))
    assert limits["a"].max_delivery_count == 5 and limits["a"].lock_duration.seconds == 30
    assert limits["b"].max_delivery_count == 2 and limits["b"].lock_duration.seconds == 60
    assert limits["b"].requires_duplicate_detection
    assert limits["b"].duplicate_detection_window == timedelta(minutes=10)


@pytest.mark.parametrize(("props", "message"), [
    ({"maxDeliveryCount": True}, "queues.q.maxDeliveryCount: must be an integer"),
    ({"requiresDuplicateDetection": "yes"},
     "queues.q.requiresDuplicateDetection: must be true or false"),
    ({"lockDuration": "PT5X"}, "queues.q.lockDuration"),
])
def test_bad_properties_are_refused_with_their_name(props, message):
    with pytest.raises(QueueFileError, match=message):
        parse_queue_limits(doc(q=props))


def test_the_limits_are_the_local_hosts_catalog_of_the_same_file():
    # One parser (azurekit.queues) for the app and the local host: the same numbers.
    ours = load_queue_limits()
    theirs = load_queue_catalog(DEFAULT_QUEUES_FILE)
    assert set(ours) == set(theirs.queues)
    for name, limits in ours.items():
        props = theirs.queues[name]
        assert (limits.max_delivery_count, limits.lock_duration,
                limits.requires_duplicate_detection, limits.duplicate_detection_window) == \
            (props.max_delivery_count, props.lock_duration,
             props.requires_duplicate_detection, props.duplicate_detection_history_time_window)


def test_missing_or_broken_file_is_named(tmp_path):
    with pytest.raises(QueueFileError, match="cannot read"):
        load_queue_limits(tmp_path / "nope.json")
    bad = tmp_path / "queues.json"
    bad.write_text("{")
    with pytest.raises(QueueFileError, match="queues.json: not valid JSON"):
        load_queue_limits(bad)
    bad.write_text(json.dumps({"queues": []}))
    with pytest.raises(QueueFileError, match="queues.json: "):
        load_queue_limits(bad)
