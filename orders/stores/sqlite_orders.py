"""Embedded order database: immutable orders in a SQLite file (the local default).

Implements :class:`orders.stores.ports.OrderStore`. The order is kept as its camelCase
JSON document, the same shape as in Cosmos DB, so the two backends hold the same data.
"""

from __future__ import annotations

from pathlib import Path

from clocks import Clock, SystemClock
from orders.models import Order, format_utc
from orders.stores._sqlite import Database
from orders.stores.errors import ConflictError
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


class SqliteOrderStore:
    """Order database in a SQLite file (SPEC S1, X5).

    Parameters
    ----------
    path : str or Path
        Database file, separate from the task hub so it can be backed up and recovered
        on its own (SPEC X4). May be the state store's file (the tables differ).
    clock : Clock, optional
        Time source for ``stored_at``; :class:`clocks.SystemClock` by default.
    synchronous : {"FULL", "NORMAL"}
        See :func:`sqlitekit.connect`.
    """

    def __init__(
        self, path: str | Path, *, clock: Clock | None = None, synchronous: str = "FULL"
    ) -> None:
        self._db = Database(path, synchronous=synchronous)
        self._clock = clock or SystemClock()
        with self._db.use() as conn, write(conn):
            for statement in _SCHEMA:
                conn.execute(statement)

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its OrderID exists; equal data again is accepted.

        Parameters
        ----------
        order : Order
            The submitted order.

        Returns
        -------
        Created[Order]
            ``created=True`` if written now; else the stored, equal order.

        Raises
        ------
        ConflictError
            If a different order is stored under the same OrderID (it stays unchanged).
        TransientStoreError
            If the file stayed locked past the busy timeout.
        """
        with self._db.use() as conn:
            with write(conn):
                cursor = conn.execute(
                    "INSERT INTO orders (order_id, document, stored_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (order_id) DO NOTHING",
                    (order.order_id, order.model_dump_json(), format_utc(self._clock.now())),
                )
                if cursor.rowcount == 1:
                    return Created(order, created=True)
                row = conn.execute(
                    "SELECT document FROM orders WHERE order_id = ?", (order.order_id,)
                ).fetchone()
        existing = Order.model_validate_json(row["document"])
        if not existing.same_data(order):
            raise ConflictError(
                f"orderId {order.order_id!r}: a different order is already stored under "
                "this OrderID; nothing was overwritten (SPEC S1)"
            )
        return Created(existing, created=False)

    def get(self, order_id: str) -> Order | None:
        """Return the order stored under ``order_id``, or None.

        Raises
        ------
        StoreError
            On a SQLite error.
        """
        with self._db.use() as conn:
            row = conn.execute(
                "SELECT document FROM orders WHERE order_id = ?", (order_id,)
            ).fetchone()
        return None if row is None else Order.model_validate_json(row["document"])

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
