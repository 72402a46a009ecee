"""Prices from the catalogue: every order line is priced by the SKU's catalogue entry (S1).

The catalogue is the inventory: each SKU's stock item carries ``unitPrice``, the TPC-H PART
``p_retailprice`` of its part, loaded with the stock (a Cosmos DB container on Azure). An
order's ``unitPrice`` must equal it (TPC-H: ``l_extendedprice = l_quantity *
p_retailprice``) and its ``discount`` stay within :data:`MAX_DISCOUNT`; the total is
already checked against the lines (:class:`orders.models.OrderContent`), so a priced order cannot
be cheaper than the catalogue says. See docs/client.md, "Prices".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from orders.models.inventory import StockItem
from orders.models.order import OrderContent

MAX_DISCOUNT = Decimal("0.10")
"""Largest discount accepted: TPC-H ``l_discount`` is drawn from 0.00 to 0.10."""
CATALOGUE_CURRENCY = "USD"
"""The currency of the catalogue's prices; an order in another is not priced by it."""


@dataclass(frozen=True)
class PriceProblem:
    """Why an order's prices differ from the catalogue, told two ways (S1, X10).

    ``told``: for the client that sent the order, quoting its own values (prices, SKU,
    currency) and the catalogue's price; ``logged``: the same line, field and rule with
    every value withheld, for the service's log. A rule's bound (``MAX_DISCOUNT``) stays.
    """

    told: str
    logged: str


def price_problem(order: OrderContent, read: Callable[[str], StockItem | None]
                  ) -> PriceProblem | None:
    """Return why ``order``'s prices differ from the catalogue, naming the line; else None.

    ``read`` returns a SKU's stock item (one point read per distinct SKU). A SKU the
    catalogue has no item for, or an item without a price, is refused: SKUs are matched
    exactly, so ``p1-s1`` is not ``P1-S1``; an order in another currency than
    :data:`CATALOGUE_CURRENCY` is refused (the same figures in yen cost a hundredth).
    """
    if order.currency != CATALOGUE_CURRENCY:
        rule = f"the catalogue prices in {CATALOGUE_CURRENCY} only"
        return PriceProblem(f"order.currency: {order.currency}; {rule}",
                            f"order.currency: not {CATALOGUE_CURRENCY}; {rule}")
    items: dict[str, StockItem | None] = {}
    for index, line in enumerate(order.lines):
        where, n = f"order.lines[{index}]", index + 1
        if line.sku not in items:
            items[line.sku] = read(line.sku)
        item = items[line.sku]
        if item is None or item.unit_price is None:
            rule = "is not priced in the catalogue; only catalogue SKUs can be ordered"
            return PriceProblem(f"{where}.sku: SKU {line.sku} (line {n}) {rule}",
                                f"{where}.sku (line {n}): the SKU {rule}")
        if line.unit_price != item.unit_price:
            return PriceProblem(
                f"{where}.unitPrice: {line.unit_price} (line {n}, SKU {line.sku}) differs "
                f"from the catalogue's price {item.unit_price}",
                f"{where}.unitPrice (line {n}): differs from the catalogue's price")
        if line.discount > MAX_DISCOUNT:
            rule = f"is above the largest discount MAX_DISCOUNT={MAX_DISCOUNT}"
            return PriceProblem(f"{where}.discount: {line.discount} (line {n}) {rule}",
                                f"{where}.discount (line {n}): {rule}")
    return None
