import json
from datetime import timedelta

import pytest

from azurekit.durations import format_duration, parse_duration
from azurekit.queues import (
    DEFAULT_QUEUES_FILE,
    QueuePropertiesError,
    load_queue_catalog,
    parse_queue_catalog,
)


def test_repository_queues_file_declares_the_app_queues():
    catalog = load_queue_catalog()
    assert DEFAULT_QUEUES_FILE.name == "queues.json"
    assert set(catalog.queues) == {
        "orders",
        "payment-requests",
        "shipping-requests",
        "agent-replies",
        "operator-alerts",
        "dead-letters",
    }
    for props in [*catalog.queues.values(), catalog.reply_queue_properties]:
        assert timedelta(seconds=5) <= props.lock_duration <= timedelta(minutes=5)
        assert props.max_delivery_count >= 1
        # A4: replies and requests rely on duplicate detection.
        assert props.requires_duplicate_detection is True
    assert catalog.reply_queue_name("shop-1") == "replies-shop-1"
    assert catalog.resolve("replies-shop-1") == catalog.reply_queue_properties
    assert catalog.resolve("REPLIES-Shop-1") == catalog.reply_queue_properties


def test_each_client_has_a_submit_queue_with_duplicate_detection():
    catalog = load_queue_catalog()
    assert catalog.submit_queue_name("shop-1") == "orders-shop-1"
    assert catalog.resolve("orders-shop-1") == catalog.submit_queue_properties
    assert catalog.submit_queue_properties.requires_duplicate_detection is True
    assert catalog.resolve("orders") == catalog.queues["orders"]  # the shared queue
    assert catalog.resolve("orders-") is None and not catalog.is_reply_queue("orders-shop-1")
    with pytest.raises(ValueError, match="client_id"):
        catalog.submit_queue_name("bad/id")


def test_a_declared_queue_may_not_look_like_a_client_submit_queue(queues_doc):
    queues_doc["clientSubmitQueues"] = {"namePattern": "in-{clientId}", "properties": {}}
    assert parse_queue_catalog(queues_doc).submit_queue_name("a") == "in-a"
    queues_doc["queues"]["in-x"] = {}
    with pytest.raises(QueuePropertiesError,
                       match="queues.in-x: name collides with the submit queue pattern"):
        parse_queue_catalog(queues_doc)


def test_a_catalog_without_submit_queues_has_none(queues_doc):
    catalog = parse_queue_catalog(queues_doc)
    assert catalog.submit_queue_pattern is None and not catalog.is_submit_queue("orders-a")
    with pytest.raises(ValueError, match="clientSubmitQueues: not declared"):
        catalog.submit_queue_name("a")


def test_overrides_merge_over_defaults(queues_doc):
    queues_doc["queues"]["work"] = {"lockDuration": "PT1M", "maxDeliveryCount": 7}
    catalog = parse_queue_catalog(queues_doc)
    work, other = catalog.queues["work"], catalog.queues["other"]
    assert work.lock_duration == timedelta(minutes=1)
    assert work.max_delivery_count == 7
    assert work.default_message_time_to_live == timedelta(days=1)  # from defaults
    assert other.lock_duration == timedelta(seconds=30)
    assert other.max_delivery_count == 3


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["queues"]["work"].update(lockDuration="PT10M"),
            "queues.work.lockDuration: 'PT10M' exceeds the Service Bus maximum",
        ),
        (
            lambda d: d["queues"]["work"].update(lockDuration="30 seconds"),
            "queues.work.lockDuration: '30 seconds' is not an ISO 8601 duration",
        ),
        (
            lambda d: d["queues"]["work"].update(maxDeliveryCont=4),
            "queues.work: unknown key(s) ['maxDeliveryCont']",
        ),
        (
            lambda d: d["defaults"].update(maxDeliveryCount=0),
            "defaults.maxDeliveryCount: 0 is below the Service Bus minimum of 1",
        ),
        (
            lambda d: d["defaults"].update(requiresDuplicateDetection="true"),
            "defaults.requiresDuplicateDetection: must be true or false",
        ),
        (
            lambda d: d["defaults"].update(duplicateDetectionHistoryTimeWindow="PT5S"),
            "defaults.duplicateDetectionHistoryTimeWindow: 'PT5S' is below",
        ),
        (
            lambda d: d["defaults"].pop("lockDuration"),
            "defaults: missing required properties ['lockDuration']",
        ),
        (
            lambda d: d["queues"].update({"bad$name": {}}),
            "queues.bad$name: queue names use letters",
        ),
        (
            lambda d: d["queues"].update({"replies-x": {}}),
            "queues.replies-x: name collides with the reply queue pattern",
        ),
        (
            lambda d: d["clientReplyQueues"].update(namePattern="replies"),
            "clientReplyQueues.namePattern: must be a string containing {clientId}",
        ),
    ],
)
def test_bad_properties_name_the_field_and_rule(queues_doc, mutate, expected):
    mutate(queues_doc)
    with pytest.raises(QueuePropertiesError) as info:
        parse_queue_catalog(queues_doc, source="queues.json")
    assert str(info.value).startswith("queues.json: ")
    assert expected in str(info.value)


def test_bad_file_error_names_file_and_field(tmp_path, queues_doc):
    queues_doc["queues"]["other"]["defaultMessageTimeToLive"] = "P1Y"
    path = tmp_path / "broken-queues.json"
    path.write_text(json.dumps(queues_doc), encoding="utf-8")
    with pytest.raises(
        QueuePropertiesError,
        match=r"broken-queues\.json: queues\.other\."
        r"defaultMessageTimeToLive: .*years and months are not allowed",
    ):
        load_queue_catalog(path)


def test_invalid_json_and_missing_file(tmp_path):
    path = tmp_path / "q.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(QueuePropertiesError, match=r"q\.json: not valid JSON"):
        load_queue_catalog(path)
    with pytest.raises(QueuePropertiesError, match="cannot read"):
        load_queue_catalog(tmp_path / "missing.json")


def test_reply_queue_client_id_rule(catalog):
    with pytest.raises(ValueError, match="client_id"):
        catalog.reply_queue_name("bad/id")
    assert catalog.resolve("replies-") is None
    assert catalog.resolve("replies--x") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30S", timedelta(seconds=30)),
        ("PT10M", timedelta(minutes=10)),
        ("P14D", timedelta(days=14)),
        ("P2W", timedelta(weeks=2)),
        ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        ("PT0.25S", timedelta(milliseconds=250)),
    ],
)
def test_parse_and_format_durations(text, expected):
    assert parse_duration(text) == expected
    assert parse_duration(format_duration(expected)) == expected


@pytest.mark.parametrize("text", ["", "P", "PT", "P1DT", "30S", "P1Y", "P1M", "PT-1S", 30])
def test_parse_duration_rejects_bad_text(text):
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_duration(text)


def test_format_duration_examples():
    assert format_duration(timedelta(0)) == "PT0S"
    assert format_duration(timedelta(days=14)) == "P14D"
    assert format_duration(timedelta(minutes=10)) == "PT10M"
    assert format_duration(timedelta(days=1, seconds=0.5)) == "P1DT0.5S"
