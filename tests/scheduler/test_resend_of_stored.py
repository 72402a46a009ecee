"""A resend of a stored order is the same submission (X5), whatever changed since it was stored.

Every check a new order meets at submission (the largest amount, the catalogue's prices,
admission control) ran when the order was stored; a later price, setting or backlog must not
answer its resend "Rejected ... nothing was stored" while the stored order runs and is
charged. Each change is a row: the first send is accepted, the change happens, the resend is
accepted again (``created`` False) and the client hears RequestReceived, never Rejected; a
resend with other data is still refused as ``ConflictingOrder``.
"""

from decimal import Decimal

import pytest

from scheduler import submission
from tests.scheduler.test_admission import submit
from tests.scheduler.test_pricing import CATALOGUE, GOOD, body, env  # noqa: F401 - fixture

BODY = body(GOOD, ("P2-S3", "902.00", "0"))


def price_raised(stores):
    # No operation reprices a SKU yet; the stored item is rewritten as one would.
    item = stores.inventory.get("P2-S3")
    stores.inventory._replace(item.model_copy(update={"unit_price": Decimal("950.00")}))
    return {"priced": True}


CHANGES = {
    "the catalogue's price rose": price_raised,
    "MAX_ORDER_AMOUNT was lowered below its total": lambda stores: {
        "max_amount": Decimal("100.00")},
    "admission control is full": lambda stores: {"max_in_flight": 1},
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_resend_of_a_stored_order_is_accepted_after_a_change(env, change):  # noqa: F811
    stores, sent, now = env
    first = submit(BODY, stores, sent, now, message_id="m1", priced=True)
    assert isinstance(first, submission.Accepted) and first.created
    options = {"priced": True, **change(stores)}
    again = submit(BODY, stores, sent, now, message_id="m2", **options)
    assert isinstance(again, submission.Accepted) and not again.created, again
    assert [status for _, status, _ in sent.statuses()] == ["RequestReceived"] * 2
    # A new order meets the changed check: the change is real.
    other = body(GOOD, ("P2-S3", "902.00", "0")).replace(b'"ORD-1"', b'"ORD-2"')
    refused = submit(other, stores, sent, now, message_id="m3", **options)
    assert not isinstance(refused, submission.Accepted), refused


def test_a_resend_with_other_data_is_still_a_conflict(env):  # noqa: F811
    stores, sent, now = env
    submit(BODY, stores, sent, now, message_id="m1", priced=True)
    changed = body(GOOD, ("P2-S3", "902.00", "0.05"))
    refused = submit(changed, stores, sent, now, message_id="m2", priced=True,
                     max_amount=Decimal("100.00"))
    assert isinstance(refused, submission.Rejected)
    assert refused.reason == "ConflictingOrder"
