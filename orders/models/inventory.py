"""The local inventory's contracts: one stock item per SKU, its holds, and OutOfStock.

A :class:`StockItem` is the one document of a SKU (``P<partkey>-S<suppkey>`` for TPC-H
orders): how many units are available, how many were loaded and restocked, and one
:class:`Hold` per order line that reserved units of it. The holds live in the item itself,
so reserving a line (decrement plus hold) and releasing it (increment plus released mark)
are each one conditional write of one document (ETag, SPEC S4, X7): a crash between two
lines leaves every line either wholly reserved or untouched, never half-done.

A hold is keyed ``<order key>#<line index>`` (:func:`hold_key`; the index counts the
order's lines from 0). A released hold stays as a tombstone (``released: true``), so a
late rerun of a reservation that compensation already released reserves nothing again.
"""

from __future__ import annotations

from pydantic import Field

from orders.models._types import Contract, Sku

MAX_QUANTITY = 1_000_000_000
"""Upper bound of a stock quantity (available, loaded or restocked)."""


class Hold(Contract):
    """What one order line holds of a SKU.

    Attributes
    ----------
    quantity : int
        Units taken from the stock for the line; 0 for a tombstone written by a release
        that found nothing reserved.
    released : bool
        True once compensation gave the units back (SPEC S9).
    """

    quantity: int = Field(ge=0, le=1_000_000)
    released: bool = False


class StockItem(Contract):
    """The stock of one SKU, with the holds of the order lines that reserved it.

    Attributes
    ----------
    sku : str
        The SKU (the item's id and partition key).
    available : int
        Units that can still be reserved; never below 0.
    loaded : int
        Units loaded initially (the demo loads TPC-H PARTSUPP ``ps_availqty``, scaled).
    restocked : int
        Units an operator added since.
    holds : dict of str to Hold
        The order lines' holds, keyed by :func:`hold_key`.
    etag : str or None
        The stored version's ETag; None for an item not read from a store.

    Notes
    -----
    Conservation: ``loaded + restocked - available`` equals the quantities of the holds
    not released (:attr:`held`); the audit checks it (``demo/audit.py``).
    """

    sku: Sku
    available: int = Field(ge=0, le=MAX_QUANTITY)
    loaded: int = Field(ge=0, le=MAX_QUANTITY)
    restocked: int = Field(default=0, ge=0, le=MAX_QUANTITY)
    holds: dict[str, Hold] = Field(default_factory=dict)
    etag: str | None = Field(default=None, exclude=True)

    @property
    def held(self) -> int:
        """Units held by order lines whose hold is not released."""
        return sum(h.quantity for h in self.holds.values() if not h.released)

    @property
    def balanced(self) -> bool:
        """Whether ``loaded + restocked - available`` equals :attr:`held`."""
        return self.loaded + self.restocked - self.available == self.held


class OutOfStock(Contract):
    """An order line asks for more units than the SKU has: a permanent failure.

    Attributes
    ----------
    sku : str
        The SKU.
    line : int
        The line's index in the order, from 0.
    requested : int
        Units the line asks for.
    available : int
        Units the SKU had when the line was tried.
    """

    sku: Sku
    line: int = Field(ge=0)
    requested: int = Field(gt=0)
    available: int = Field(ge=0)

    def reason(self) -> str:
        """Return the reason the client and the operators are told."""
        return (f"out of stock: SKU {self.sku} (line {self.line + 1}) requested "
                f"{self.requested}, available {self.available}")


def hold_key(order_id: str, line: int) -> str:
    """Return the key of an order line's hold: ``<order key>#<line index>``.

    Parameters
    ----------
    order_id : str
        The order key.
    line : int
        The line's index in the order, from 0.
    """
    return f"{order_id}#{line}"


def split_hold_key(key: str) -> tuple[str, int]:
    """Return the order key and line index of a hold key (inverse of :func:`hold_key`).

    Raises
    ------
    ValueError
        If ``key`` does not end in ``#<line index>``.
    """
    order_id, sep, line = key.rpartition("#")
    if not sep or not order_id or not line.isdigit():
        raise ValueError(f"hold key: must be '<order key>#<line index>'; got {key!r}")
    return order_id, int(line)
