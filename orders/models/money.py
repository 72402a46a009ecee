"""Amount rules checked at submission: the currency's minor unit and the largest order (S1).

:data:`MINOR_UNITS` is ISO 4217 list one's exceptions; a small table beats a dependency.
Only ``totalPrice`` must be whole minor units; unit prices keep four decimals. Applied to
new submissions only: a stored order must still load (X6).
"""

from __future__ import annotations

from decimal import Decimal

from orders.models.order import OrderContent

DEFAULT_MINOR_UNITS = 2

MINOR_UNITS: dict[str, int] = {
    "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
    "PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0,
    "XPF": 0,
    "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
    "CLF": 4, "UYW": 4,
}


def minor_units(currency: str) -> int:
    """Return the decimals of ``currency``'s minor unit (ISO 4217; 2 if unlisted)."""
    return MINOR_UNITS.get(currency, DEFAULT_MINOR_UNITS)


def fixed_point(amount: Decimal) -> Decimal:
    """Return ``amount`` written without an exponent: ``2E+1`` -> ``20``, ``2.000E+1`` -> ``20.00``.

    What a payment service is sent, however the client wrote the number. Digits and
    decimals stay as written (S1 checks the currency's minor unit), so a request an
    in-flight attempt already sent keeps its body, and its idempotency fingerprint.
    """
    return Decimal(format(amount, "f"))


def decimals_of(amount: Decimal) -> int:
    """Return the decimal places of a finite ``amount``, trailing zeros not counted."""
    exponent = amount.normalize().as_tuple().exponent
    return max(0, -int(exponent))


def minor_unit_problem(order: OrderContent) -> tuple[str, str] | None:
    """Return ``(field, rule)`` if ``totalPrice`` is not whole minor units, else None."""
    allowed = minor_units(order.currency)
    if decimals_of(order.total_price) <= allowed:
        return None
    # Neither the amount nor the currency is quoted: both are Restricted (X10).
    return ("totalPrice", f"at most {allowed} decimal places, the ISO 4217 minor unit of "
                          f"the order's currency; got {decimals_of(order.total_price)}")


def maximum_problem(order: OrderContent, maximum: Decimal) -> tuple[str, str] | None:
    """Return ``(field, rule)`` for the first amount above ``maximum``, else None."""
    rule = f"must be at most MAX_ORDER_AMOUNT={maximum}"
    if order.total_price > maximum:  # the amount is Restricted: not quoted (X10)
        return "totalPrice", rule
    for index, line in enumerate(order.lines):
        if line.unit_price > maximum:
            return f"lines[{index}].unitPrice", rule
    return None
