"""Amount rules of a submission: the currency's minor unit and MAX_ORDER_AMOUNT (S1)."""

from decimal import Decimal

import pytest
from pydantic import ValidationError

from orders.models import ClientOrder, Order
from orders.models.messages import SubmitOrder
from orders.models.money import maximum_problem, minor_unit_problem, minor_units
from tests.e2e.harness import make_order


def priced(total: str, currency: str, unit_price: str | None = None) -> ClientOrder:
    """A one-line client's order of ``total`` in ``currency`` (the line priced to match)."""
    base = make_order(1, lines=1)
    line = base.lines[0].model_copy(update={"unit_price": Decimal(unit_price or total)})
    return base.model_copy(update={"currency": currency, "lines": (line,),
                                   "total_price": Decimal(total)})


@pytest.mark.parametrize(("currency", "decimals"), [
    ("JPY", 0), ("KRW", 0), ("USD", 2), ("EUR", 2), ("BHD", 3), ("KWD", 3), ("CLF", 4)])
def test_minor_units_follow_iso_4217(currency, decimals):
    assert minor_units(currency) == decimals


@pytest.mark.parametrize(("total", "currency"), [
    ("1500", "JPY"), ("1500.00", "JPY"), ("12.34", "USD"), ("12.3", "USD"),
    ("1.234", "BHD"), ("1.5000", "BHD")])
def test_totals_in_whole_minor_units_pass(total, currency):
    assert minor_unit_problem(priced(total, currency)) is None


@pytest.mark.parametrize(("total", "currency", "allowed", "given"), [
    ("1500.5", "JPY", 0, 1), ("12.345", "USD", 2, 3), ("1.2345", "BHD", 3, 4)])
def test_a_total_finer_than_the_minor_unit_names_the_field_and_rule(total, currency, allowed,
                                                                    given):
    # Neither the amount nor the currency is quoted: both are Restricted (X10).
    assert minor_unit_problem(priced(total, currency)) == (
        "totalPrice", f"at most {allowed} decimal places, the ISO 4217 minor unit of the "
                      f"order's currency; got {given}")


def test_submit_order_refuses_it_but_a_stored_order_still_loads():
    order = priced("12.345", "USD")
    # An order stored before the rule existed must still load and finish (X6).
    stored = Order.of_client(order, "acme~ORD-00001")
    assert Order.model_validate(stored.model_dump(mode="json")) == stored
    with pytest.raises(ValidationError, match=r"order\.totalPrice: at most 2 decimal places"):
        SubmitOrder(client_id="acme", reply_to="replies-acme", order=order)


def test_the_maximum_applies_to_the_total_and_every_unit_price():
    limit = Decimal("1000")
    assert maximum_problem(priced("1000.00", "USD"), limit) is None
    assert maximum_problem(priced("1000.01", "USD"), limit) == (
        "totalPrice", "must be at most MAX_ORDER_AMOUNT=1000")
    given_away = priced("0", "USD", unit_price="5000").model_copy(
        update={"total_price": Decimal("0.01")})
    assert maximum_problem(given_away, limit) == (
        "lines[0].unitPrice", "must be at most MAX_ORDER_AMOUNT=1000")
