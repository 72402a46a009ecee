"""One client-id rule for the app's contracts, the settings and the queue catalog."""

import pytest

from azurekit.client_ids import CLIENT_ID_MAX_LENGTH, check_client_id, is_client_id
from azurekit.queues import load_queue_catalog
from orders.lifecycle.ids import order_key


@pytest.mark.parametrize("value", ["a", "acme", "a-1", "x" * 20])
def test_valid_client_ids(value):
    assert check_client_id(value) == value and is_client_id(value)


@pytest.mark.parametrize("value", ["", "-a", "a-", "Acme", "a_b", "x" * 21, 7])
def test_invalid_client_ids_name_the_rule(value):
    with pytest.raises(ValueError, match="1 to 20 lower-case letters, digits or '-'"):
        check_client_id(value)
    assert not is_client_id(value)


def test_the_longest_client_keeps_its_instance_ids_within_100_characters():
    # <clientId>~<OrderID>:comp:<n> with a 64-character OrderID and a 5-digit attempt.
    key = order_key("c" * CLIENT_ID_MAX_LENGTH, "o" * 64)
    assert len(f"{key}:comp:99999") <= 100


def test_the_queue_catalog_applies_the_same_rule_to_reply_queues():
    # It allowed 50 characters before: a queue the app could never name.
    catalog = load_queue_catalog()
    assert catalog.reply_queue_name("x" * 20) == f"replies-{'x' * 20}"
    assert catalog.reply_queue_name("ACME") == "replies-acme"  # entity names ignore case
    with pytest.raises(ValueError, match="client_id: must be 1 to 20"):
        catalog.reply_queue_name("x" * 21)
    assert catalog.resolve(f"replies-{'x' * 21}") is None
