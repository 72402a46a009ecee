"""The compensation log entry: classification, retention, no card data (S9, X10)."""

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from orders.models import Classification, CompensationEntry
from orders.models.compensation import RETENTION, looks_like_card_number
from tests.support.records import CHARGE, RESERVE, SHIP, entry

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("details", "level", "days"), [
    (RESERVE, "Confidential", 180),
    (CHARGE, "Restricted", 540),
    (SHIP, "Confidential", 180),
    ({"step": "release_inventory", "reservationId": "RES-1"}, "Internal", 90),
    ({"step": "refund", "outcome": "Undone", "refundId": "re_1", "amount": "1.00",
      "currency": "USD"}, "Restricted", 540),
    ({"step": "refund", "outcome": "NothingToUndo"}, "Internal", 90),
    ({"step": "cancel_shipment", "outcome": "Undone", "shipmentId": "shp_1"},
     "Confidential", 180),
])
def test_entry_takes_the_most_sensitive_classification_of_its_fields(details, level, days):
    made = entry(details, NOW)
    assert made.classification.value == level
    assert made.retention_days == days == RETENTION[Classification(level)].days
    assert made.retain_until == NOW + timedelta(days=days)


def test_classification_ranks_from_public_to_restricted():
    ranks = [c.rank for c in (Classification.PUBLIC, Classification.INTERNAL,
                              Classification.CONFIDENTIAL, Classification.RESTRICTED)]
    assert ranks == [0, 1, 2, 3]


def test_an_entry_may_be_classified_higher_never_lower_than_its_fields():
    data = entry(CHARGE, NOW).model_dump(mode="json")
    with pytest.raises(ValidationError, match="classification: must be at least Restricted"):
        CompensationEntry.model_validate({**data, "classification": "Confidential"})
    shipped = entry(SHIP, NOW).model_dump(mode="json")
    raised = CompensationEntry.model_validate({**shipped, "classification": "Restricted"})
    assert raised.classification is Classification.RESTRICTED


def test_retain_until_must_follow_from_retention_days():
    data = entry(CHARGE, NOW).model_dump(mode="json")
    with pytest.raises(ValidationError, match="retainUntil"):
        CompensationEntry.model_validate({**data, "retentionDays": 30})


def test_card_numbers_are_refused_in_any_field():
    with pytest.raises(ValidationError, match="paymentId: looks like a card number"):
        entry({**CHARGE, "paymentId": "4111 1111 1111 1111"}, NOW)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        entry({**CHARGE, "cardNumber": "4111111111111111"}, NOW)
    # A long numeric id that fails the Luhn check is not a card number.
    assert entry({**CHARGE, "paymentId": "4111111111111112"}, NOW).details.payment_id


def test_looks_like_card_number():
    assert looks_like_card_number("5500-0000-0000-0004")
    assert not looks_like_card_number("pay_4111111111111111")
    assert not looks_like_card_number("123456789012")  # too short


def test_entry_round_trips_as_json_and_names_its_step():
    made = entry(CHARGE, NOW, seq=2)
    assert CompensationEntry.model_validate(made.model_dump(mode="json")) == made
    assert made.step.value == "charge" and made.undoes is None
    refund = entry({"step": "refund", "outcome": "NothingToUndo"}, NOW)
    assert refund.undoes.value == "charge"


def test_same_step_compares_details_not_writer_or_time():
    a = entry(CHARGE, NOW)
    b = entry(CHARGE, NOW + timedelta(hours=1), instance_id="ORD-1:2")
    assert a.same_step(b)
    assert not a.same_step(entry({**CHARGE, "amount": "20.01"}, NOW))
