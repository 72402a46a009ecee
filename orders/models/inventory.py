"""The local inventory's contracts: one stock item per SKU, its holds, and OutOfStock.

Holds live in their item, so reserving or releasing an order's lines of one SKU is one
conditional write of one document (S4, X7); only orders in flight hold anything, so the item's
size is bounded by them. Hold keys and conservation: docs/inventory.md.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field

from orders.models._types import Contract, InstanceId, Sku

MAX_QUANTITY = 1_000_000_000


class Hold(Contract):
    """What one order line holds of a SKU, and the attempt that took or last adopted it.

    ``released`` holds (tombstones, ``quantity`` 0 if nothing was reserved) are written by
    code before the holds were pruned; they are still read.
    """

    quantity: int = Field(ge=0, le=1_000_000)
    released: bool = False
    by: InstanceId | None = None


class StockItem(Contract):
    """The stock of one SKU, with the holds of orders in flight keyed by :func:`hold_key`.

    ``consumed`` counts the units of Processed orders, whose holds were settled (removed).
    ``unit_price`` is the catalogue's price of the SKU (TPC-H ``p_retailprice``,
    :mod:`orders.pricing`); None: not priced, so not orderable where prices are checked.
    ``loaded + restocked - available`` equals :attr:`held` + ``consumed``
    (``demo/stock_audit.py`` checks it).
    """

    sku: Sku
    available: int = Field(ge=0, le=MAX_QUANTITY)
    loaded: int = Field(ge=0, le=MAX_QUANTITY)
    restocked: int = Field(default=0, ge=0, le=MAX_QUANTITY)
    consumed: int = Field(default=0, ge=0, le=MAX_QUANTITY)
    unit_price: Decimal | None = Field(default=None, ge=0, decimal_places=4,
                                       allow_inf_nan=False)
    holds: dict[str, Hold] = Field(default_factory=dict)
    etag: str | None = Field(default=None, exclude=True)

    @property
    def held(self) -> int:
        """Units held by order lines whose hold is not released."""
        return sum(h.quantity for h in self.holds.values() if not h.released)

    @property
    def balanced(self) -> bool:
        """Whether ``loaded + restocked - available`` equals :attr:`held` + ``consumed``."""
        return self.loaded + self.restocked - self.available == self.held + self.consumed


class OutOfStock(Contract):
    """An order line asks for more units than the SKU has: a permanent failure."""

    sku: Sku
    line: int = Field(ge=0)
    requested: int = Field(gt=0)
    available: int = Field(ge=0)

    def reason(self) -> str:
        """Return the reason the client and the operators are told.

        It never tells the available quantity: a client could probe the free stock with
        orders it expects to fail; ``available`` stays in the attempt's history for operators.
        """
        return (f"out of stock: SKU {self.sku} (line {self.line + 1}) requested "
                f"{self.requested}, more than the units available")


def hold_key(order_key: str, line: int) -> str:
    """Return ``<order key>#<line index>``, the line index counted from 0."""
    return f"{order_key}#{line}"


def split_hold_key(key: str) -> tuple[str, int]:
    """Return the order key and line index of a hold key.

    Raises
    ------
    ValueError
        If ``key`` does not end in ``#<line index>``.
    """
    order_key, sep, line = key.rpartition("#")
    if not sep or not order_key or not line.isdigit():
        raise ValueError(f"hold key: must be '<order key>#<line index>'; got {key!r}")
    return order_key, int(line)
