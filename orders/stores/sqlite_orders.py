"""Embedded order database: immutable orders in a SQLite file (the local default).

Implements :class:`orders.stores.ports.OrderStore`. The order is kept as its camelCase
JSON document, the same shape as in Cosmos DB, so the two backends hold the same data.
"""

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
    """Order database in a SQLite file (SPEC S1, X5).

    Takes the ``path`` and ``synchronous`` of :class:`SqliteAdapter` and a ``clock``, the
    time source for ``stored_at`` (:class:`clocks.SystemClock` if None).
    """

    STORE = "orders"
    SCHEMA = _SCHEMA

    def __init__(
        self, path: str | Path, *, clock: Clock | None = None, synchronous: str = "FULL"
    ) -> None:
        self._clock = clock or SystemClock()
        super().__init__(path, synchronous=synchronous)

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its OrderID exists; equal data again is accepted.

        See :meth:`orders.stores.ports.OrderStore.create_if_absent`; a
        :class:`~orders.stores.errors.TransientStoreError` means the file stayed locked
        past the busy timeout.
        """
        with self._db.use("write") as conn:
            with write(conn):
                cursor = conn.execute(
                    "INSERT INTO orders (order_id, document, stored_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (order_id) DO NOTHING",
                    (order.order_id, order.model_dump_json(), format_utc(self._clock.now())),
                )
                if cursor.rowcount == 1:
                    return Created(order, created=True)
                self._db.count("point_read")
                row = conn.execute(
                    "SELECT document FROM orders WHERE order_id = ?", (order.order_id,)
                ).fetchone()
        return keep_order(Order.model_validate_json(row["document"]), order)

    def get(self, order_id: str) -> Order | None:
        """Return the order stored under ``order_id``, or None.

        Raises
        ------
        StoreError
            On a SQLite error.
        """
        with self._db.use("point_read") as conn:
            row = conn.execute(
                "SELECT document FROM orders WHERE order_id = ?", (order_id,)
            ).fetchone()
        return None if row is None else Order.model_validate_json(row["document"])
