"""Bounds on one order's size: lines, distinct SKUs, units (X3, S1).

One order is work for the shared inventory and the agents in proportion to its lines and
SKUs, so a client cannot make one order the work of hundreds: submission refuses an order
past any bound with "Rejected" naming the field and the limit (docs/client.md, "Order size").
A TPC-H order has at most 7 lines of at most 50 units each, far inside every bound.
"""

from __future__ import annotations

from orders.models.order import OrderContent

MAX_ORDER_LINES = 50
"""Lines of one order at most."""
MAX_ORDER_SKUS = 20
"""Distinct SKUs of one order at most (each is one stock item written)."""
MAX_ORDER_UNITS = 10_000
"""Units of one order at most, all lines together."""


def size_problem(order: OrderContent) -> str | None:
    """Return why ``order`` is too large, naming the field and the limit, or None.

    The rules: at most :data:`MAX_ORDER_LINES` lines, :data:`MAX_ORDER_SKUS` distinct SKUs
    and :data:`MAX_ORDER_UNITS` units (X3).
    """
    lines = len(order.lines)
    if lines > MAX_ORDER_LINES:
        return (f"order.lines: {lines} lines; an order holds at most "
                f"MAX_ORDER_LINES={MAX_ORDER_LINES}")
    skus = len({line.sku for line in order.lines})
    if skus > MAX_ORDER_SKUS:
        return (f"order.lines[].sku: {skus} distinct SKUs; an order holds at most "
                f"MAX_ORDER_SKUS={MAX_ORDER_SKUS}")
    units = sum(line.quantity for line in order.lines)
    if units > MAX_ORDER_UNITS:
        return (f"order.lines[].quantity: {units} units in all; an order holds at most "
                f"MAX_ORDER_UNITS={MAX_ORDER_UNITS}")
    return None
