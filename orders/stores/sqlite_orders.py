"""Embedded order database: immutable orders as their Cosmos DB JSON documents in SQLite."""

from __future__ import annotations

from pathlib import Path

from clocks import Clock, SystemClock
from orders.models import Order, format_utc
from orders.stores._records import keep_order
from orders.stores._sqlite import SqliteAdapter
from orders.stores.ports import Created
from sqlitekit import write

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS orders (
        order_id  TEXT PRIMARY KEY,  -- OrderID
        document  TEXT NOT NULL,     -- the Order as camelCase JSON; never updated
        stored_at TEXT NOT NULL      -- when this store first wrote it (UTC)
    )
    """,
)


class SqliteOrderStore(SqliteAdapter):
    """Order database in a SQLite file (S1, X5); ``clock`` stamps ``stored_at``."""

    STORE = "orders"
    SCHEMA = _SCHEMA

    def __init__(
        self, path: str | Path, *, clock: Clock | None = None, synchronous: str = "FULL"
    ) -> None:
        self._clock = clock or SystemClock()
        super().__init__(path, synchronous=synchronous)

    def create_if_absent(self, order: Order) -> Created[Order]:
        """See :meth:`orders.stores.ports.OrderStore.create_if_absent`."""
        with self._db.use("write") as conn:
            with write(conn):
                cursor = conn.execute(
                    "INSERT INTO orders (order_id, document, stored_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (order_id) DO NOTHING",
                    (order.order_key, order.model_dump_json(), format_utc(self._clock.now())),
                )
                if cursor.rowcount == 1:
                    return Created(order, created=True)
                self._db.count("point_read")
                row = conn.execute(
                    "SELECT document FROM orders WHERE order_id = ?", (order.order_key,)
                ).fetchone()
        return keep_order(Order.model_validate_json(row["document"]), order)

    def get(self, order_key: str) -> Order | None:
        """Return the order stored under ``order_key``, or None."""
        with self._db.use("point_read") as conn:
            row = conn.execute(
                "SELECT document FROM orders WHERE order_id = ?", (order_key,)
            ).fetchone()
        return None if row is None else Order.model_validate_json(row["document"])
