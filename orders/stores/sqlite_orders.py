"""Embedded order database: immutable orders as their Cosmos DB JSON documents in SQLite."""

from __future__ import annotations

import sqlite3
from functools import partial
from pathlib import Path

from clocks import Clock, SystemClock
from orders.models import Order, format_utc
from orders.stores._records import keep_order
from orders.stores._sqlite import SqliteAdapter
from orders.stores.ports import Created

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
        """See :meth:`orders.stores.ports.OrderStore.create_if_absent`.

        One INSERT, atomic on its own (no BEGIN/COMMIT); only an insert that changed nothing
        reads the stored order, to compare it (orders are never updated, so the read finds
        what the insert found).
        """
        document = order.model_dump_json()
        stored = self._db.transact(partial(_insert_or_read, order.order_key, document,
                                           format_utc(self._clock.now())),
                                   "write", one_statement=True)
        if stored is None:
            return Created(order, created=True)
        self._db.count("point_read")
        return keep_order(Order.model_validate_json(stored), order)

    def get(self, order_key: str) -> Order | None:
        """Return the order stored under ``order_key``, or None."""
        with self._db.use("point_read") as conn:
            row = conn.execute(
                "SELECT document FROM orders WHERE order_id = ?", (order_key,)
            ).fetchone()
        return None if row is None else Order.model_validate_json(row["document"])


def _insert_or_read(order_key: str, document: str, stored_at: str,
                    conn: sqlite3.Connection) -> str | None:
    """Insert the order unless its key exists: None, else the stored order's document.

    Should the order found by the insert be gone by the read (a row deleted by hand), the
    insert runs again.
    """
    while True:
        if conn.execute("INSERT INTO orders (order_id, document, stored_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (order_id) DO NOTHING",
                        (order_key, document, stored_at)).rowcount == 1:
            return None
        row = conn.execute("SELECT document FROM orders WHERE order_id = ?",
                           (order_key,)).fetchone()
        if row is not None:
            return str(row["document"])
