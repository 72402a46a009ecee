import json
import math
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from orders.messaging import OutgoingMessage


def test_dict_body_is_compact_utf8_json_with_json_content_type():
    message = OutgoingMessage({"orderId": "o-1", "city": "Köln"}, message_id="req-1")
    assert message.body_bytes() == '{"orderId":"o-1","city":"Köln"}'.encode()
    assert message.content_type == "application/json"
    assert json.loads(message.body_bytes()) == {"orderId": "o-1", "city": "Köln"}


def test_str_body_is_sent_as_is():
    message = OutgoingMessage("plain text", content_type="text/plain")
    assert message.body_bytes() == b"plain text"


def test_default_message_id_is_stable_for_one_object_and_unique_across_objects():
    message = OutgoingMessage({"a": 1})
    assert len(message.message_id) == 32
    assert message.message_id == message.message_id
    assert OutgoingMessage({"a": 1}).message_id != message.message_id


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"body": {"when": datetime(2030, 1, 1)}}, "body: must be JSON-serialisable"),
        ({"body": {"x": math.nan}}, "body: must be JSON-serialisable"),
        ({"body": 42}, "body: must be a dict, str or bytes"),
        ({"body": {}, "message_id": ""}, "message_id"),
        ({"body": {}, "message_id": "x" * 129}, "message_id"),
        ({"body": {}, "application_properties": {"k": [1]}}, r"application_properties\['k'\]"),
        ({"body": {}, "correlation_id": 7}, "correlation_id"),
        ({"body": {}, "scheduled_enqueue_time": datetime(2030, 1, 1)}, "scheduled_enqueue_time"),
        ({"body": {}, "time_to_live": timedelta(seconds=-1)}, "time_to_live"),
    ],
)
def test_invalid_fields_are_named(kwargs, field):
    with pytest.raises(ValueError, match=field):
        OutgoingMessage(**kwargs)


def test_port_imports_neither_azure_nor_devhost():
    code = (
        "import sys, orders.messaging\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('azure', 'devhost'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
