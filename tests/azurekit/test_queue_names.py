"""The Service Bus queue-name rule, shared by the contracts and the queue catalogue."""

import pytest

from azurekit.queues import is_queue_name, parse_queue_catalog
from orders.models.notice_io import PublishStatusInput


@pytest.mark.parametrize("name", ["orders", "Replies-Acme", "a", "a/b.c_d-e", "x" * 260])
def test_names_the_rule_allows(name):
    assert is_queue_name(name)


@pytest.mark.parametrize("name", ["", "-orders", "orders-", "orders\n", "or ders", "x" * 261,
                                  "\u212a", "$orders"])
def test_names_the_rule_refuses(name):
    assert not is_queue_name(name)


def test_a_contract_and_the_catalogue_refuse_the_same_name():
    with pytest.raises(ValueError, match="(?s)reply_to.*must be a Service Bus queue name"):
        PublishStatusInput(order_key="ORD-1", reply_to="bad-", status="OrderCompleted")
    queues = {"defaults": {"lockDuration": "PT1M", "maxDeliveryCount": 5,
                           "requiresDuplicateDetection": True,
                           "duplicateDetectionHistoryTimeWindow": "PT10M",
                           "deadLetteringOnMessageExpiration": True,
                           "defaultMessageTimeToLive": "P1D"},
              "queues": {"bad-": {}},
              "clientReplyQueues": {"namePattern": "replies-{clientId}"}}
    with pytest.raises(ValueError, match="queues.bad-: queue names use letters"):
        parse_queue_catalog(queues)
