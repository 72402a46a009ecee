"""Amount rules checked at submission: the currency's minor unit and the largest order (S1).

Why a table and not a library: the ISO 4217 minor unit is one small number per currency,
almost all currencies have two decimals, and the exceptions (about twenty codes, changed by
an amendment every few years) fit in :data:`MINOR_UNITS`, taken from ISO 4217 list one
("Minor unit" column). A dependency for them would hide the rule; a code not listed here
has two decimals.

Only ``totalPrice`` (what the payment service is asked to charge) must be a whole number of
minor units: a unit price may be finer (a screw at 0.0045 USD) and keeps the contract's four
decimal places (:data:`orders.models.order.MONEY_DECIMAL_PLACES`). The rules are applied to
new submissions only (:class:`orders.models.messages.SubmitOrder` and
:func:`scheduler.submission.parse_submission`), never to an order already stored: an order
accepted before a rule existed must still load and finish (SPEC X6).
"""

from __future__ import annotations

from decimal import Decimal

from orders.models.order import Order

DEFAULT_MINOR_UNITS = 2
"""Decimals of a currency :data:`MINOR_UNITS` does not list (ISO 4217: most of them)."""

MINOR_UNITS: dict[str, int] = {
    # Zero decimals.
    "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
    "PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0,
    "XPF": 0,
    # Three decimals.
    "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
    # Four decimals (units of account).
    "CLF": 4, "UYW": 4,
}
"""ISO 4217 currencies whose minor unit is not two decimals."""


def minor_units(currency: str) -> int:
    """Return the decimals of ``currency``'s minor unit (ISO 4217 list one).

    Parameters
    ----------
    currency : str
        Three capital letters, e.g. ``"JPY"``.

    Returns
    -------
    int
        0 for JPY, 2 for USD, 3 for BHD; :data:`DEFAULT_MINOR_UNITS` for an unlisted code.
    """
    return MINOR_UNITS.get(currency, DEFAULT_MINOR_UNITS)


def decimals_of(amount: Decimal) -> int:
    """Return the decimal places ``amount`` is written with, trailing zeros not counted.

    ``Decimal("1.50")`` has one (``1.5`` is a whole number of cents either way); a finite
    amount only (the contract refuses infinities and NaN before this runs).
    """
    exponent = amount.normalize().as_tuple().exponent
    return max(0, -int(exponent))


def minor_unit_problem(order: Order) -> tuple[str, str] | None:
    """Tell why ``order``'s ``totalPrice`` is not a whole number of minor units, if it is not.

    Returns
    -------
    (str, str) or None
        The field and the rule it breaks: ``("totalPrice", "at most 0 decimal places for
        JPY (ISO 4217 minor unit); got 100.5")``; None when the total fits its currency.
    """
    allowed = minor_units(order.currency)
    if decimals_of(order.total_price) <= allowed:
        return None
    return ("totalPrice", f"at most {allowed} decimal places for {order.currency} (ISO 4217 "
                          f"minor unit); got {order.total_price}")


def maximum_problem(order: Order, maximum: Decimal) -> tuple[str, str] | None:
    """Tell which amount of ``order`` exceeds ``maximum``, if one does.

    Parameters
    ----------
    order : Order
        The submitted order.
    maximum : Decimal
        ``MAX_ORDER_AMOUNT``, in the order's currency.

    Returns
    -------
    (str, str) or None
        The field and the rule: ``("totalPrice", "must be at most MAX_ORDER_AMOUNT=1000000;
        got 2500000.00")``, or the first ``lines[i].unitPrice`` above it; None when every
        amount is within it.
    """
    rule = f"must be at most MAX_ORDER_AMOUNT={maximum}"
    if order.total_price > maximum:
        return "totalPrice", f"{rule}; got {order.total_price}"
    for index, line in enumerate(order.lines):
        if line.unit_price > maximum:
            return f"lines[{index}].unitPrice", f"{rule}; got {line.unit_price}"
    return None
