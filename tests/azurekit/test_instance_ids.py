import re

import pytest

from azurekit.instance_ids import new_instance_id, validate_instance_id

INVALID_IDS = [
    ("", "1 to 100 characters"),
    ("x" * 101, "1 to 100 characters"),
    ("@x", "must not start with '@'"),
    ("a/b", "must not contain '/'"),
    ("a\\b", "must not contain '\\\\'"),
    ("a#b", "must not contain '#'"),
    ("a?b", "must not contain '?'"),
    ("a\x01b", "control characters (U+0001"),
    ("a\x7fb", "control characters (U+007F"),
    ("a\x85b", "control characters (U+0085"),
]


@pytest.mark.parametrize("value", ["order-42-attempt-1", "x" * 100, "a", "commande é 7",
                                   "x@y", "ORD:1|2"])
def test_valid_ids_are_returned_unchanged(value):
    assert validate_instance_id(value) == value


@pytest.mark.parametrize(("value", "rule"), INVALID_IDS)
def test_invalid_ids_are_refused_naming_field_and_rule(value, rule):
    with pytest.raises(ValueError) as info:
        validate_instance_id(value)
    assert str(info.value).startswith("instanceId: ")
    assert rule in str(info.value)


def test_non_string_is_refused():
    with pytest.raises(ValueError, match="instanceId: must be a string, got int"):
        validate_instance_id(42)


def test_generated_ids_are_uuid4_hex_and_distinct():
    ids = {new_instance_id() for _ in range(50)}
    assert len(ids) == 50
    for value in ids:
        assert re.fullmatch(r"[0-9a-f]{32}", value)
        assert value[12] == "4"  # uuid version 4
        assert validate_instance_id(value) == value


@pytest.mark.parametrize("value", ["a\x85b", "a\x9fb", "a\x80b"])
def test_the_apps_contracts_refuse_c1_control_characters_as_the_host_does(value):
    # .NET's char.IsControl (the extension's rule) covers U+0080-U+009F; the app's own
    # check stopped at U+007F before it shared this one.
    from orders.models._types import check_instance_id

    with pytest.raises(ValueError, match=r"control characters \(U\+00[89]"):
        check_instance_id(value)
    with pytest.raises(ValueError, match=r"instanceId: must not contain control"):
        validate_instance_id(value)
