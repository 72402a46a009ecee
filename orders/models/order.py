"""The immutable order data: what a client submits and the order database keeps (SPEC S1).

Nothing in an :class:`Order` changes after submission; that is what makes the write to the
order database idempotent (SPEC X5): a redelivered message carries equal data and is
accepted, different data under the same OrderID is a conflict. Money is ``Decimal``
throughout and travels as a JSON string, so no amount ever passes through a float.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field, model_validator

from orders.models._types import Contract, Currency, CustomerId, OrderKey, Sku, UtcDatetime
from orders.models.classification import Classification, Classified

ORDER_SCHEMA_VERSION = 1
"""Version of the order contract written by this code (SPEC X6)."""

TOTAL_TOLERANCE_PER_LINE = Decimal("0.021")
"""Allowed difference between ``total_price`` and the computed total, per order line.

Clients compute each line's charge in whole minor units (cents). The TPC-H data generator,
like dbgen, truncates twice per line: after the discount (losing < 0.01, which the tax then
scales by up to 1.08) and after the tax (< 0.01 more), so a line can sit up to just under
0.0208 below the exact ``extended * (1 - discount) * (1 + tax)``; at scale factor 0.01 the
largest gap seen is 0.0202. 0.021 per line accepts every standard rounding of every line
while a pricing error of three cents or more per line is still refused.
"""

MONEY_DECIMAL_PLACES = 4
"""At most four decimal places for amounts (enough for three-decimal currencies and
sub-cent unit prices)."""


def _shown(amount: Decimal, places: int | None = None) -> str:
    """``amount`` as given (or to ``places``); scientific past 10**20, so a message stays short."""
    if amount.adjusted() >= 20:
        return f"{amount:.6e}"
    return str(amount) if places is None else f"{amount:.{places}f}"


class OrderLine(Contract):
    """One line of an order, in TPC-H terms (L_QUANTITY, L_EXTENDEDPRICE, L_DISCOUNT, L_TAX).

    Parameters
    ----------
    sku : str
        Stock keeping unit, 1 to 64 characters from ``A-Z a-z 0-9 . _ -``.
    quantity : int
        Units ordered, 1 to 1,000,000 (a JSON integer; strings and booleans are rejected).
    unit_price : Decimal
        Price of one unit in the order's currency, >= 0, at most 4 decimal places.
    discount : Decimal
        Fraction 0..1 taken off the extended price (0.05 = 5 %).
    tax : Decimal
        Fraction 0..1 added to the discounted price (0.08 = 8 %).
    """

    sku: Sku
    quantity: int = Field(gt=0, le=1_000_000, strict=True)
    unit_price: Annotated[Decimal, Classified(Classification.RESTRICTED)] = Field(
        ge=0, decimal_places=MONEY_DECIMAL_PLACES, allow_inf_nan=False)
    discount: Decimal = Field(default=Decimal(0), ge=0, le=1, decimal_places=4, allow_inf_nan=False)
    tax: Decimal = Field(default=Decimal(0), ge=0, le=1, decimal_places=4, allow_inf_nan=False)

    @property
    def extended_price(self) -> Decimal:
        """TPC-H L_EXTENDEDPRICE: ``quantity * unit_price``, unrounded."""
        return self.quantity * self.unit_price

    @property
    def charge(self) -> Decimal:
        """What this line adds to O_TOTALPRICE: ``extended * (1 + tax) * (1 - discount)``."""
        return self.extended_price * (1 + self.tax) * (1 - self.discount)


class Order(Contract):
    """An order as submitted: immutable, keyed on OrderID (SPEC S1, X5).

    Parameters
    ----------
    order_id : str
        OrderID (JSON ``orderId``), 1 to 64 characters from ``A-Z a-z 0-9 . _ -`` so that
        the orchestration instance id ``f"{order_id}:{attempt}"`` is valid (SPEC D2). As a
        client submits it, the client's own OrderID
        (:class:`~orders.models.messages.SubmitOrder` refuses anything else); as the order
        database holds it, the order key ``<clientId>~<OrderID>``
        (:func:`orders.lifecycle.ids.order_key`), or the plain OrderID of an order from
        before clients had their own queues.
    customer_id : str
        Customer (JSON ``customerId``), 1 to 64 characters, no control characters.
    currency : str
        ISO 4217 code, e.g. ``"EUR"``.
    lines : tuple of OrderLine
        1 to 1000 lines.
    total_price : Decimal
        TPC-H O_TOTALPRICE: ``sum(line.charge)``, within
        :data:`TOTAL_TOLERANCE_PER_LINE` per line.
    created_at : datetime
        When the client created the order, timezone-aware (stored as UTC).
    schema_version : int
        Version of this contract, >= 1 (SPEC X6).

    Raises
    ------
    pydantic.ValidationError
        Naming the field and the rule broken, e.g. a ``total_price`` that does not match
        the lines.
    """

    order_id: OrderKey
    # Classified as the compensation log's fields are (orders.models.classification):
    # views withhold them unless asked for details (SPEC X10).
    customer_id: Annotated[CustomerId, Classified(Classification.CONFIDENTIAL)]
    currency: Annotated[Currency, Classified(Classification.RESTRICTED)]
    lines: Annotated[tuple[OrderLine, ...], Classified(Classification.CONFIDENTIAL)] = Field(
        min_length=1, max_length=1000)
    # > 0: the payment service refuses a zero charge, so a free order would only fail later.
    total_price: Annotated[Decimal, Classified(Classification.RESTRICTED)] = Field(
        gt=0, decimal_places=MONEY_DECIMAL_PLACES, allow_inf_nan=False)
    created_at: UtcDatetime
    schema_version: int = Field(default=ORDER_SCHEMA_VERSION, ge=1)

    @property
    def computed_total(self) -> Decimal:
        """Unrounded TPC-H O_TOTALPRICE computed from the lines."""
        return sum((line.charge for line in self.lines), Decimal(0))

    @model_validator(mode="after")
    def _total_matches_lines(self) -> Order:
        tolerance = TOTAL_TOLERANCE_PER_LINE * len(self.lines)
        try:
            computed = self.computed_total
            mismatch = abs(self.total_price - computed) > tolerance
        except ArithmeticError as exc:  # decimal.Overflow: an exponent beyond 999999
            raise ValueError(
                f"totalPrice: cannot be checked against the lines: the amounts are out of "
                f"range ({type(exc).__name__})"
            ) from None
        if mismatch:
            raise ValueError(
                f"totalPrice: {_shown(self.total_price)} does not match the lines: "
                f"sum(quantity * unitPrice * (1 + tax) * (1 - discount)) = "
                f"{_shown(computed, 4)}, allowed difference {tolerance} "
                f"({TOTAL_TOLERANCE_PER_LINE} per line, TPC-H O_TOTALPRICE)"
            )
        return self

    def same_data(self, other: Order) -> bool:
        """Tell whether ``other`` carries the same immutable order data (SPEC S1).

        Amounts compare by value (``1.5 == 1.50``), times by instant.

        Parameters
        ----------
        other : Order
            Typically the order already stored under the same OrderID.

        Returns
        -------
        bool
            True if every field is equal.
        """
        return self.model_dump() == other.model_dump()
