"""The stock audit: whether the inventory balances with how the orders ended (S9, X7).

Per SKU, what was taken (``loaded + restocked - available``) must equal the Processed
orders' lines plus what CompensationFailed orders still hold, and the item's own holds
plus what Processed orders settled (``consumed``) must agree; Error and Compensated holds
are reported by :func:`demo.audit.audit`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from orders.models import OrderLine, ProcessState, StateRecord
from orders.models.inventory import StockItem, split_hold_key

OUT_OF_STOCK_MARK = "failed permanently: out of stock"


def held_by_order(items: Iterable[StockItem]) -> dict[str, list[tuple[str, int]]]:
    """Return, per order key, the SKUs and units its lines hold (holds not released)."""
    held: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for item in items:
        for key, hold in item.holds.items():
            if not hold.released and hold.quantity:
                held[split_hold_key(key)[0]].append((item.sku, hold.quantity))
    return dict(held)


def stock_problems(items: Iterable[StockItem], records: Mapping[str, StateRecord],
                   lines: Mapping[str, Sequence[OrderLine]]) -> list[str]:
    """Return a ``stock unbalanced <sku>: ...`` line per SKU that does not balance, in SKU order."""
    expected: dict[str, int] = defaultdict(int)
    for order_key, record in records.items():
        if record.process_state is ProcessState.PROCESSED:
            for line in lines.get(order_key, ()):
                expected[line.sku] += line.quantity
    items = sorted(items, key=lambda i: i.sku)
    for order_key, held in held_by_order(items).items():
        owner = records.get(order_key)
        if owner is not None and owner.process_state is ProcessState.COMPENSATION_FAILED:
            for sku, units in held:
                expected[sku] += units
    problems = []
    for item in items:
        taken = item.loaded + item.restocked - item.available
        if taken != expected.get(item.sku, 0) or not item.balanced:
            problems.append(
                f"stock unbalanced {item.sku}: loaded {item.loaded} + restocked "
                f"{item.restocked} - available {item.available} = {taken} taken; the "
                f"Processed orders' lines want {expected.get(item.sku, 0)}, the holds say "
                f"{item.held} + consumed {item.consumed}")
    return problems


def out_of_stock_orders(records: Mapping[str, StateRecord]) -> int:
    """Count the orders that failed because a line's SKU ran out."""
    return sum(1 for r in records.values()
               if r.failure_reason is not None and OUT_OF_STOCK_MARK in r.failure_reason)
