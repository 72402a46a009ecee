"""The immutable order (so its write is idempotent, X5); money is ``Decimal``, never float (S1)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field, model_validator

from orders.models._types import Contract, Currency, CustomerId, OrderKey, Sku, UtcDatetime
from orders.models.classification import Classification, Classified

ORDER_SCHEMA_VERSION = 1

TOTAL_TOLERANCE_PER_LINE = Decimal("0.021")
"""Allowed gap between ``total_price`` and the computed total, per line.

dbgen-style clients truncate twice per line (after discount, after tax): up to just under
0.0208; 0.021 accepts that while refusing a pricing error of three cents.
"""

MONEY_DECIMAL_PLACES = 4


class OrderLine(Contract):
    """One order line in TPC-H terms; ``discount`` and ``tax`` are fractions 0..1."""

    sku: Sku
    quantity: int = Field(gt=0, le=1_000_000, strict=True)
    unit_price: Annotated[Decimal, Classified(Classification.RESTRICTED)] = Field(
        ge=0, decimal_places=MONEY_DECIMAL_PLACES, allow_inf_nan=False)
    discount: Decimal = Field(default=Decimal(0), ge=0, le=1, decimal_places=4, allow_inf_nan=False)
    tax: Decimal = Field(default=Decimal(0), ge=0, le=1, decimal_places=4, allow_inf_nan=False)

    @property
    def extended_price(self) -> Decimal:
        """TPC-H L_EXTENDEDPRICE, unrounded."""
        return self.quantity * self.unit_price

    @property
    def charge(self) -> Decimal:
        """The line's part of O_TOTALPRICE: ``extended * (1 + tax) * (1 - discount)``."""
        return self.extended_price * (1 + self.tax) * (1 - self.discount)


class Order(Contract):
    """An order as submitted: immutable, keyed on its order key (S1, X5).

    Raises
    ------
    pydantic.ValidationError
        Naming the field and rule, e.g. a ``total_price`` that does not match the lines.
    """

    order_key: OrderKey = Field(alias="orderId")
    # Classified fields are withheld from views unless details are asked for (X10).
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
        """Unrounded TPC-H O_TOTALPRICE from the lines."""
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
            # No amount is quoted: they are Restricted, and the reason is stored, logged
            # and alerted on (X10); the client holds its own amounts.
            raise ValueError(
                f"totalPrice: does not match the lines: it differs from "
                f"sum(quantity * unitPrice * (1 + tax) * (1 - discount)) by more than the "
                f"allowed difference {tolerance} ({TOTAL_TOLERANCE_PER_LINE} per line, "
                f"TPC-H O_TOTALPRICE)"
            )
        return self

    def same_data(self, other: Order) -> bool:
        """Tell whether ``other`` holds equal data; amounts by value, times by instant (S1)."""
        return self.model_dump() == other.model_dump()
