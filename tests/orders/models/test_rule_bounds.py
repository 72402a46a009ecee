"""A refusal withholds a classified field's value but quotes its rule's bound (X10, S1).

Every form runs through ``wire.validate`` of a SubmitOrder: a value under a classified
field (the order's lines, its total) is withheld, and the rule's bound is quoted as the
contract states it, also when the value reads the same.
"""

import pytest

from orders.models.messages import SubmitOrder
from orders.models.wire import InvalidMessage, validate

LINE = {"sku": "P1-S1", "quantity": 2, "unitPrice": "10.00"}


def submission(line: dict | None = None, total: object = "20.00") -> dict:
    return {"schemaVersion": 1, "clientId": "acme", "replyTo": "replies-acme",
            "order": {"orderId": "ORD-1", "customerId": "CUST-1", "currency": "USD",
                      "lines": [line or LINE], "totalPrice": total,
                      "createdAt": "2030-01-01T00:00:00Z"}}


@pytest.mark.parametrize(("body", "rule"), [
    (submission({**LINE, "quantity": 0}, "0.01"),
     "order.lines.0.quantity: Input should be greater than 0"),
    (submission({**LINE, "quantity": 1_000_001}),
     "order.lines.0.quantity: Input should be less than or equal to 1000000"),
    (submission({**LINE, "discount": "1.5"}),
     "order.lines.0.discount: Input should be less than or equal to 1"),
    (submission({**LINE, "unitPrice": "-0"}, "0"), "order.totalPrice: Input should be "
                                                   "greater than 0"),
], ids=["equal to the bound", "above the largest", "a fraction above one",
        "total at the bound"])
def test_a_rules_bound_is_quoted_and_the_value_withheld(body, rule):
    with pytest.raises(InvalidMessage) as info:
        validate(body, SubmitOrder)
    assert rule in info.value.description
