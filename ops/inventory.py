"""What operators see of the inventory: a SKU's stock, an order's reservation, restocking.

An order's lines are Confidential (``orders/models/order.py``): without ``details`` the
views show which lines are held and released, never a line's SKU or units (X10).
"""

from __future__ import annotations

import logging
from typing import Any

from ops.redaction import withheld
from orders.models import ProcessState
from orders.models.classification import Classification
from orders.models.compensation import ReleaseDetails, ReservationDetails
from orders.models.inventory import StockItem, hold_key, split_hold_key

log = logging.getLogger("orders.ops.inventory")

MAX_HOLDS_SHOWN = 200
"""Holds listed per SKU (newest writes are not ordered; the count is always given)."""


LINE_DATA = withheld(Classification.CONFIDENTIAL)
"""What stands in for a line's SKU or units without ``details``."""


def stock_json(item: StockItem, *, details: bool = False) -> dict[str, Any]:
    """Return a SKU's stock as operators see it (JSON-ready); see docs/operations.md.

    The stock's own figures always; each hold's units (an order's line) only with
    ``details``.
    """
    holds = []
    for key, hold in list(item.holds.items())[:MAX_HOLDS_SHOWN]:
        order_key, line = split_hold_key(key)
        holds.append({"orderId": order_key, "line": line + 1,
                      "quantity": hold.quantity if details else LINE_DATA,
                      "released": hold.released})
    return {"sku": item.sku, "available": item.available, "loaded": item.loaded,
            "restocked": item.restocked, "held": item.held, "consumed": item.consumed,
            "balanced": item.balanced,
            "holdCount": len(item.holds), "holds": holds}


def stock_of(services: Any, sku: str, *, details: bool = False) -> dict[str, Any] | None:
    """Return :func:`stock_json` of ``sku``, or None if the inventory has no item for it."""
    item = services.stores.inventory.get(sku)
    return None if item is None else stock_json(item, details=details)


def reservation_of(services: Any, order_key: str, *, details: bool = False
                   ) -> list[dict[str, Any]] | None:
    """Return the order's reservation line by line; None if nothing was reserved or no inventory.

    Without ``details`` a line's SKU, units and its SKU's stock are withheld; whether it is
    fully held and whether it was released are shown.
    """
    inventory = getattr(services.stores, "inventory", None)
    entries_of = getattr(getattr(services.stores, "compensation", None), "entries", None)
    if inventory is None or entries_of is None:
        return None
    entries = entries_of(order_key)
    reserved = next((e.details for e in entries if isinstance(e.details, ReservationDetails)),
                    None)
    if reserved is None:
        return None
    record = services.stores.states.get(order_key)
    # A Processed order's holds were settled: its lines took their units for good.
    settled = record is not None and record.process_state is ProcessState.PROCESSED
    # A released order's holds left the item; the release entry says what came back.
    given = [line for e in entries if isinstance(e.details, ReleaseDetails)
             for line in e.details.released or ()]
    rows = []
    for index, line in enumerate(reserved.lines):
        item = inventory.get(line.sku)
        hold = item.holds.get(hold_key(order_key, index)) if item is not None else None
        taken = line.quantity if settled and item is not None and hold is None else 0
        released = hold is None and bool(given) and given[0].sku == line.sku
        back = given.pop(0).quantity if released else 0
        held = hold.quantity if hold is not None else taken or back
        row = {"line": index + 1, "sku": line.sku, "requested": line.quantity, "held": held,
               "fullyHeld": held == line.quantity,
               "released": bool(hold is not None and hold.released) or released or (
                   hold is None and not settled and _released(entries)),
               "settled": bool(taken),
               "available": item.available if item is not None else None}
        if not details:
            row.update({name: LINE_DATA for name in ("sku", "requested", "held", "available")})
        rows.append(row)
    return rows


def _released(entries: Any) -> bool:
    """Whether the order's log holds a release entry (its holds then left the items)."""
    return any(isinstance(e.details, ReleaseDetails) for e in entries)


def restock(services: Any, sku: str, quantity: int, *, operator: str,
            reason: str = "") -> dict[str, Any]:
    """Add ``quantity`` units to ``sku`` (an operator's restock, logged); return :func:`stock_json`.

    Raises
    ------
    ValueError
        If ``quantity`` is not a positive int, or ``sku`` breaks the SKU rule.
    TransientStoreError
        If the item stayed contended (retry).
    """
    item = services.stores.inventory.restock(sku, quantity)
    log.warning("restock: %s added %d units to %s (available %d); reason: %s",
                operator, quantity, sku, item.available, reason or "none given",
                extra={"sku": sku, "operator": operator})
    return stock_json(item)


__all__ = ["reservation_of", "restock", "stock_json", "stock_of"]
