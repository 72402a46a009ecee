"""The inventory store: its port, and the conditional-update logic both adapters share.

Every change is a read then a replace conditional on the item's ETag (S4), re-decided on a
conflict up to :data:`MAX_CONFLICT_RETRIES` times. All of an order's lines of one SKU are
decided on one read and written in one replace, so a line is reserved wholly or not at all,
an order of many lines costs one write per SKU (not per line), and a rerun reserves nothing
twice (X7). Holds leave the item when their order ends (settled when Processed, removed when
released), so an item holds only the orders in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
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
    """A released tombstone (written before holds were removed) is there; not reserved again."""
    UNTRACKED = "Untracked"
    """The inventory holds no item for the SKU (not stocked here); nothing changed."""


Line = tuple[str, str, int]
"""One order line to reserve: ``(sku, hold key, quantity)``."""


@dataclass(frozen=True)
class LineReservation:
    """The outcome of one line: units it holds (0 unless reserved) and units available after."""

    outcome: Reserved
    quantity: int
    available: int


class InventoryStore(Protocol):
    """The local inventory: one stock item per SKU, changed only conditionally (S4)."""

    def load(self, stock: Mapping[str, int],
             prices: Mapping[str, Decimal] | None = None) -> int:
        """Create the items of ``stock`` (SKU -> units) that do not exist; return how many.

        ``prices`` (SKU -> catalogue price, :mod:`orders.pricing`) prices the items created.
        """
        ...

    def get(self, sku: str) -> StockItem | None:
        """Return the SKU's item with its ETag, or None if the inventory has none."""
        ...

    def get_many(self, skus: Iterable[str]) -> dict[str, StockItem | None]:
        """Return the item of each distinct SKU of ``skus``, as :meth:`get` would, by SKU.

        Cosmos DB: one point read per SKU; SQLite: one query for all of them.
        """
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

    def reserve_lines(self, lines: Sequence[Line], *, by: str | None = None
                      ) -> list[LineReservation]:
        """Reserve ``(sku, key, quantity)`` lines in order, as :meth:`reserve` each.

        Decided in order on one read of each SKU's item, stopping after the first line in
        :data:`STOPS` (one result per line tried); then each changed item is one conditional
        write, whatever the number of its lines. ``by`` (the attempt's instance id) is
        written on each hold taken, and on a hold an earlier attempt took (adopted, so that
        attempt's :meth:`undo` leaves it).

        Raises
        ------
        TransientStoreError
            As :meth:`reserve`; SKUs written before the contended one stay reserved.
        """
        ...

    def release(self, sku: str, key: str) -> int:
        """Give back what the line ``key`` holds and remove its hold; return the units (S9)."""
        ...

    def release_lines(self, lines: Sequence[tuple[str, str]]) -> list[int]:
        """Release ``(sku, key)`` lines as :meth:`release`, one write per SKU; units per line."""
        ...

    def settle_lines(self, lines: Sequence[tuple[str, str]]) -> int:
        """Settle a Processed order's ``(sku, key)`` lines: remove their holds for good.

        The units stay taken, counted in ``consumed``; one write per SKU; returns the units.
        A line without a hold (settled before) does nothing (X7).
        """
        ...

    def undo(self, lines: Sequence[tuple[str, str]], by: str) -> int:
        """Release the lines whose holds attempt ``by`` took and no other adopted; the units.

        An attempt that finds after reserving that it no longer owns its order gives back
        what it took (docs/inventory.md, "Late reservations").
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

    def get_many(self, skus: Iterable[str]) -> dict[str, StockItem | None]:
        """See :meth:`InventoryStore.get_many`: a :meth:`get` per distinct SKU."""
        return {sku: self._read(sku) for sku in dict.fromkeys(skus)}

    def reserve(self, sku: str, key: str, quantity: int) -> LineReservation:
        """See :meth:`InventoryStore.reserve`."""
        return self.reserve_lines([(sku, key, quantity)])[0]

    def reserve_lines(self, lines: Sequence[Line], *, by: str | None = None
                      ) -> list[LineReservation]:
        """See :meth:`InventoryStore.reserve_lines`: one read and at most one write per SKU."""
        for _, _, quantity in lines:
            check_quantity(quantity)
        taken: set[str] = set()
        for _ in range(MAX_CONFLICT_RETRIES):
            items = {sku: self._read(sku) for sku in dict.fromkeys(s for s, _, _ in lines)}
            results, changed = decide_lines(items, lines, by)
            for sku, item in changed.items():
                if not self._replace(item):
                    break
                taken |= reserved_keys(lines, results, sku)
            else:
                return with_taken(lines, results, taken)
        raise contended(lines[0][0])

    def release(self, sku: str, key: str) -> int:
        """See :meth:`InventoryStore.release`."""
        return self.release_lines([(sku, key)])[0]

    def release_lines(self, lines: Sequence[tuple[str, str]]) -> list[int]:
        """See :meth:`InventoryStore.release_lines`."""
        units = self._per_sku(lines, lambda item, keys: remove_holds(item, keys, None))
        return [units.get(key, 0) for _, key in lines]

    def settle_lines(self, lines: Sequence[tuple[str, str]]) -> int:
        """See :meth:`InventoryStore.settle_lines`."""
        return sum(self._per_sku(lines, settle_holds).values())

    def undo(self, lines: Sequence[tuple[str, str]], by: str) -> int:
        """See :meth:`InventoryStore.undo`."""
        return sum(self._per_sku(lines, lambda item, keys: remove_holds(item, keys, by)
                                 ).values())

    def _per_sku(self, lines: Sequence[tuple[str, str]], change: Change) -> dict[str, int]:
        """Apply ``change`` to each SKU's item with its keys, one conditional write each."""
        keys = keys_by_sku(lines)
        units: dict[str, int] = {}
        for sku, its_keys in keys.items():
            for _ in range(MAX_CONFLICT_RETRIES):
                item = self._read(sku)
                if item is None:
                    break
                new, per_key = change(item, its_keys)
                if new is None or self._replace(new):
                    units.update(per_key)
                    break
            else:
                raise contended(sku)
        return units

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
        raise contended(sku)


Change = Callable[[StockItem, list[str]], tuple[StockItem | None, dict[str, int]]]
"""A change of one item's holds: the item to write (None: none) and the units per key."""

STOPS = frozenset({Reserved.OUT_OF_STOCK, Reserved.RELEASED})
"""Outcomes after which :meth:`InventoryStore.reserve_lines` reserves no further line."""


def decide(item: StockItem | None, key: str, quantity: int, by: str | None = None
           ) -> tuple[LineReservation, StockItem | None]:
    """Decide one line on the item as read: the outcome, and the item to write (None: no change).

    A hold taken by another attempt than ``by`` is adopted: ``by`` is written on it.
    """
    if item is None:
        return LineReservation(Reserved.UNTRACKED, 0, 0), None
    hold = item.holds.get(key)
    if hold is not None:
        outcome = Reserved.RELEASED if hold.released else Reserved.ALREADY
        adopt = by is not None and not hold.released and hold.by != by
        new = (item.model_copy(update={"holds": {**item.holds,
                                                 key: hold.model_copy(update={"by": by})}})
               if adopt else None)
        return LineReservation(outcome, hold.quantity, item.available), new
    if item.available < quantity:
        return LineReservation(Reserved.OUT_OF_STOCK, 0, item.available), None
    left = item.available - quantity
    return (LineReservation(Reserved.RESERVED, quantity, left),
            item.model_copy(update={"available": left, "holds": {
                **item.holds, key: Hold(quantity=quantity, by=by)}}))


def decide_lines(items: Mapping[str, StockItem | None], lines: Sequence[Line],
                 by: str | None) -> tuple[list[LineReservation], dict[str, StockItem]]:
    """Decide ``lines`` in order on ``items`` (by SKU, as read), stopping after a STOP.

    Returns one result per line tried and the items to write, each once whatever the
    number of its lines.
    """
    current = dict(items)
    changed: dict[str, StockItem] = {}
    results = []
    for sku, key, quantity in lines:
        got, new = decide(current[sku], key, quantity, by)
        if new is not None:
            current[sku] = changed[sku] = new
        results.append(got)
        if got.outcome in STOPS:
            break
    return results, changed


def reserved_keys(lines: Sequence[Line], results: Sequence[LineReservation],
                  sku: str) -> set[str]:
    """Return the keys of ``sku``'s lines that ``results`` say were reserved now."""
    return {key for (line_sku, key, _), got in zip(lines, results, strict=False)
            if line_sku == sku and got.outcome is Reserved.RESERVED}


def with_taken(lines: Sequence[Line], results: list[LineReservation],
               taken: set[str]) -> list[LineReservation]:
    """Report lines written by an earlier try of the same call as reserved, not ALREADY."""
    return [LineReservation(Reserved.RESERVED, got.quantity, got.available)
            if key in taken and got.outcome is Reserved.ALREADY else got
            for (_, key, _), got in zip(lines, results, strict=False)]


def remove_holds(item: StockItem, keys: list[str], by: str | None
                 ) -> tuple[StockItem | None, dict[str, int]]:
    """Remove the holds of ``keys`` (only those ``by`` holds, unless None), units given back."""
    holds = dict(item.holds)
    units: dict[str, int] = {}
    for key in keys:
        hold = holds.get(key)
        if hold is None or (by is not None and hold.by != by):
            continue
        del holds[key]
        units[key] = 0 if hold.released else hold.quantity
    if len(holds) == len(item.holds):
        return None, {}
    back = sum(units.values())
    return item.model_copy(update={"available": item.available + back, "holds": holds}), units


def settle_holds(item: StockItem, keys: list[str]) -> tuple[StockItem | None, dict[str, int]]:
    """Remove the holds of ``keys`` for good: their units move to ``consumed``."""
    holds = dict(item.holds)
    units: dict[str, int] = {}
    for key in keys:
        hold = holds.pop(key, None)
        if hold is not None:
            units[key] = 0 if hold.released else hold.quantity
    if len(holds) == len(item.holds):
        return None, {}
    return item.model_copy(update={"consumed": item.consumed + sum(units.values()),
                                   "holds": holds}), units


def new_items(stock: Mapping[str, int],
              prices: Mapping[str, Decimal] | None) -> list[StockItem]:
    """Return the items :meth:`InventoryStore.load` creates, priced from ``prices``."""
    return [StockItem(sku=sku, available=units, loaded=units,
                      unit_price=None if prices is None else prices.get(sku))
            for sku, units in stock.items()]


def check_quantity(quantity: int) -> None:
    """Raise ValueError unless ``quantity`` is an int from 1 to :data:`MAX_QUANTITY`."""
    if isinstance(quantity, bool) or not isinstance(quantity, int) or not (
            0 < quantity <= MAX_QUANTITY):
        raise ValueError(f"quantity: must be an int from 1 to {MAX_QUANTITY}; got {quantity!r}")


def keys_by_sku(lines: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """Group the (SKU, hold key) lines by SKU, SKUs and keys in the order given."""
    keys: dict[str, list[str]] = {}
    for sku, key in lines:
        keys.setdefault(sku, []).append(key)
    return keys


def contended(sku: str) -> TransientStoreError:
    """Return the error of a change whose item kept changing under each conditional write."""
    return TransientStoreError(
        f"sku {sku!r}: the stock item changed under each of {MAX_CONFLICT_RETRIES} "
        "conditional writes (ETag); retry later")
