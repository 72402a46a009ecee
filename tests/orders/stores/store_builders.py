"""Builders of valid orders and state records for the store tests."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from orders.models import Order, OrderLine, ProcessState, StateRecord


def make_order(order_key: str = "ORD-1", **changes: object) -> Order:
    # 2 * 10.00 * (1 + 0.05) * (1 - 0.10) = 18.90 and 1 * 5.00 = 5.00
    data: dict[str, object] = {
        "order_key": order_key,
        "customer_id": "CUST-7",
        "currency": "EUR",
        "lines": (
            OrderLine(
                sku="SKU-A",
                quantity=2,
                unit_price=Decimal("10.00"),
                discount=Decimal("0.10"),
                tax=Decimal("0.05"),
            ),
            OrderLine(sku="SKU-B", quantity=1, unit_price=Decimal("5.00")),
        ),
        "total_price": Decimal("23.90"),
        "created_at": datetime.fromisoformat("2030-01-01T00:00:00+00:00"),
    }
    data.update(changes)
    return Order(**data)


def make_record(
    order_key: str,
    now: datetime,
    state: ProcessState = ProcessState.PENDING,
    *,
    complete_by: datetime | None = None,
    not_before: datetime | None = None,
    reply_to: str = "client-a-replies",
    client_id: str | None = None,
    client_order_id: str | None = None,
) -> StateRecord:
    locked = state in (ProcessState.PROCESSING, ProcessState.COMPENSATING)
    return StateRecord(
        order_key=order_key,
        reply_to=reply_to,
        process_state=state,
        locked_by=f"{order_key}:1" if locked else None,
        attempt=1 if locked else 0,
        complete_by=complete_by,
        not_before=not_before,
        created_at=now,
        updated_at=now,
        client_id=client_id,
        client_order_id=client_order_id,
    )


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
