"""The inventory store: its port, and the conditional-update logic both adapters share.

Every change is a read then a replace conditional on the item's ETag (S4), re-decided on a
conflict up to :data:`MAX_CONFLICT_RETRIES` times. A line's decrement and its hold are one
replace, so a line is reserved wholly or not at all, and a rerun reserves nothing twice (X7).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from orders.models.inventory import MAX_QUANTITY, Hold, StockItem
from orders.stores.errors import TransientStoreError

MAX_CONFLICT_RETRIES = 20
"""Conditional replaces tried per change before giving up with a transient error."""


class Reserved(StrEnum):
    """How reserving one order line ended."""

    RESERVED = "Reserved"
    """Decremented now, and the hold written."""
    ALREADY = "AlreadyReserved"
    """The line's hold was there: an earlier run reserved it (X7)."""
    OUT_OF_STOCK = "OutOfStock"
    """Fewer units available than requested; nothing changed."""
    RELEASED = "Released"
    """Compensation released the line already; it is not reserved again."""
    UNTRACKED = "Untracked"
    """The inventory holds no item for the SKU (not stocked here); nothing changed."""


@dataclass(frozen=True)
class LineReservation:
    """The outcome of one line: units it holds (0 unless reserved) and units available after."""

    outcome: Reserved
    quantity: int
    available: int


class InventoryStore(Protocol):
    """The local inventory: one stock item per SKU, changed only conditionally (S4)."""

    def load(self, stock: Mapping[str, int]) -> int:
        """Create the items of ``stock`` (SKU -> units) that do not exist; return how many."""
        ...

    def get(self, sku: str) -> StockItem | None:
        """Return the SKU's item with its ETag, or None if the inventory has none."""
        ...

    def reserve(self, sku: str, key: str, quantity: int) -> LineReservation:
        """Take ``quantity`` units for the line ``key``, unless its hold exists (X7).

        Never below zero: not enough units is :attr:`Reserved.OUT_OF_STOCK`, nothing changed.

        Raises
        ------
        TransientStoreError
            If the item changed under every one of :data:`MAX_CONFLICT_RETRIES` tries.
        """
        ...

    def reserve_lines(self, lines: Sequence[tuple[str, str, int]]) -> list[LineReservation]:
        """Reserve ``(sku, key, quantity)`` lines in order, as :meth:`reserve` each.

        Stops after the first line in :data:`STOPS`; one result per line tried.

        Raises
        ------
        TransientStoreError
            As :meth:`reserve`; lines before the contended one stay reserved.
        """
        ...

    def release(self, sku: str, key: str) -> int:
        """Give back what the line ``key`` holds; return the units (S9).

        The hold stays as a released tombstone, so a second release or a late reservation does
        nothing.
        """
        ...

    def restock(self, sku: str, quantity: int) -> StockItem:
        """Add ``quantity`` units (an operator's restock); creates the item if missing.

        Raises
        ------
        ValueError
            If ``quantity`` is not a positive int.
        """
        ...

    def items(self) -> Iterator[StockItem]:
        """Yield every item (reads the whole inventory)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class ConditionalInventory:
    """The inventory's decisions over an adapter's ``_read``, ``_replace`` and ``_insert``."""

    def _read(self, sku: str) -> StockItem | None:
        raise NotImplementedError

    def _replace(self, item: StockItem) -> bool:
        """Write ``item`` if the stored ETag is ``item.etag``; False if it changed."""
        raise NotImplementedError

    def _insert(self, item: StockItem) -> bool:
        """Create ``item``; False if the SKU exists."""
        raise NotImplementedError

    def get(self, sku: str) -> StockItem | None:
        """See :meth:`InventoryStore.get`."""
        return self._read(sku)

    def reserve(self, sku: str, key: str, quantity: int) -> LineReservation:
        """See :meth:`InventoryStore.reserve`."""
        check_quantity(quantity)
        for _ in range(MAX_CONFLICT_RETRIES):
            got, new = decide(self._read(sku), key, quantity)
            if new is None or self._replace(new):
                return got
        raise _contended(sku)

    def reserve_lines(self, lines: Sequence[tuple[str, str, int]]) -> list[LineReservation]:
        """See :meth:`InventoryStore.reserve_lines`: one :meth:`reserve` per line."""
        results = []
        for sku, key, quantity in lines:
            results.append(self.reserve(sku, key, quantity))
            if results[-1].outcome in STOPS:
                break
        return results

    def release(self, sku: str, key: str) -> int:
        """See :meth:`InventoryStore.release`."""
        for _ in range(MAX_CONFLICT_RETRIES):
            item = self._read(sku)
            if item is None:
                return 0
            hold = item.holds.get(key)
            if hold is not None and hold.released:
                return 0
            units = hold.quantity if hold is not None else 0
            released = Hold(quantity=units, released=True)
            if self._replace(_with_hold(item, key, released, item.available + units)):
                return units
        raise _contended(sku)

    def restock(self, sku: str, quantity: int) -> StockItem:
        """See :meth:`InventoryStore.restock`."""
        check_quantity(quantity)
        for _ in range(MAX_CONFLICT_RETRIES):
            item = self._read(sku)
            if item is None:
                new = StockItem(sku=sku, available=quantity, loaded=0, restocked=quantity)
                if self._insert(new):
                    return self._read(sku) or new
                continue
            new = item.model_copy(update={"available": item.available + quantity,
                                          "restocked": item.restocked + quantity})
            StockItem.model_validate(new.model_dump())  # keeps the bounds (MAX_QUANTITY)
            if self._replace(new):
                return self._read(sku) or new
        raise _contended(sku)


STOPS = frozenset({Reserved.OUT_OF_STOCK, Reserved.RELEASED})
"""Outcomes after which :meth:`InventoryStore.reserve_lines` reserves no further line."""


def decide(item: StockItem | None, key: str, quantity: int
           ) -> tuple[LineReservation, StockItem | None]:
    """Decide one line on the item as read: the outcome, and the item to write (None: no change)."""
    if item is None:
        return LineReservation(Reserved.UNTRACKED, 0, 0), None
    hold = item.holds.get(key)
    if hold is not None:
        outcome = Reserved.RELEASED if hold.released else Reserved.ALREADY
        return LineReservation(outcome, hold.quantity, item.available), None
    if item.available < quantity:
        return LineReservation(Reserved.OUT_OF_STOCK, 0, item.available), None
    left = item.available - quantity
    return (LineReservation(Reserved.RESERVED, quantity, left),
            _with_hold(item, key, Hold(quantity=quantity), left))


def _with_hold(item: StockItem, key: str, hold: Hold, available: int) -> StockItem:
    return item.model_copy(update={"available": available, "holds": {**item.holds, key: hold}})


def check_quantity(quantity: int) -> None:
    """Raise ValueError unless ``quantity`` is an int from 1 to :data:`MAX_QUANTITY`."""
    if isinstance(quantity, bool) or not isinstance(quantity, int) or not (
            0 < quantity <= MAX_QUANTITY):
        raise ValueError(f"quantity: must be an int from 1 to {MAX_QUANTITY}; got {quantity!r}")


def _contended(sku: str) -> TransientStoreError:
    return TransientStoreError(
        f"sku {sku!r}: the stock item changed under each of {MAX_CONFLICT_RETRIES} "
        "conditional writes (ETag); retry later")
