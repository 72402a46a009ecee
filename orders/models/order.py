"""The immutable order (so its write is idempotent, X5); money is ``Decimal``, never float (S1).

One word per concept: a client's order (:class:`ClientOrder`) is named by the client's
OrderID, ``order_id``; the stored order (:class:`Order`) by its order key, ``order_key``.
Both are ``orderId`` on the wire, as they always were.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Self

from pydantic import Field, model_validator

from orders.models._types import (
    Contract,
    Currency,
    CustomerId,
    OrderId,
    OrderKey,
    Sku,
    UtcDatetime,
)
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


class OrderContent(Contract):
    """What an order holds besides its name: customer, currency, lines, total (S1).

    The base of :class:`ClientOrder` (named by the client's OrderID) and :class:`Order`
    (named by its order key); the checks of the data live here once.

    Raises
    ------
    pydantic.ValidationError
        Naming the field and rule, e.g. a ``total_price`` that does not match the lines.
    """

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
    def _total_matches_lines(self) -> Self:
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


# The name comes first on the wire, as it always has: pydantic orders fields from the last
# base to the first, so each order below lists its name's base after ``OrderContent``.
class _NamedByOrderId(Contract):
    order_id: OrderId = Field(alias="orderId")


class _NamedByOrderKey(Contract):
    order_key: OrderKey = Field(alias="orderId")


class ClientOrder(OrderContent, _NamedByOrderId):
    """An order as a client writes and submits it, named by its own OrderID (S1, X10).

    ``order_id`` is the client's OrderID (``orderId`` on the wire, in ``SubmitOrder.order``);
    submission stores the order under its key, as an :class:`Order`
    (:meth:`Order.of_client`).

    Raises
    ------
    pydantic.ValidationError
        Naming the field and rule: an OrderID outside its alphabet (a key such as
        ``acme~ORD-1`` too), or a ``total_price`` that does not match the lines.
    """


class Order(OrderContent, _NamedByOrderKey):
    """An order as stored: immutable, under its order key ``<clientId>~<OrderID>`` (S1, X5).

    ``order_key`` is ``orderId`` in stored documents and activity inputs; a plain OrderID
    is a legacy key (X6). The client's OrderID is never held here: it is the key's second part
    (:func:`orders.lifecycle.ids.split_order_key`) and the state record's ``client_order_id``.

    Raises
    ------
    pydantic.ValidationError
        Naming the field and rule, e.g. a ``total_price`` that does not match the lines.
    """

    @classmethod
    def of_client(cls, order: ClientOrder, key: str) -> Order:
        """Return the stored order of a client's ``order`` under its order ``key`` (S1, X5).

        Parameters
        ----------
        order : ClientOrder
            The client's order, named by its OrderID (``SubmitOrder.order``).
        key : str
            Its order key ``<clientId>~<OrderID>`` (:func:`orders.lifecycle.ids.order_key`).

        Returns
        -------
        Order
            The same content under ``key``; the OrderID stays in the key and the state record.

        Raises
        ------
        pydantic.ValidationError
            If ``key`` is not an order key.
        """
        content = {name: getattr(order, name) for name in OrderContent.model_fields}
        return cls.model_validate({**content, "order_key": key})

    def same_data(self, other: Order) -> bool:
        """Tell whether ``other`` holds equal data; amounts by value, times by instant (S1)."""
        return self.model_dump() == other.model_dump()
