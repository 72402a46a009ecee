"""Embedded inventory: one stock item per SKU in a SQLite file (the local default).

Items are kept as their Cosmos DB JSON documents with an ETag column every write replaces,
so processes race on conditional updates exactly as they do on Cosmos DB.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from orders.models.inventory import StockItem
from orders.stores._sqlite import SqliteAdapter
from orders.stores.inventory import (
    ConditionalInventory,
    Line,
    LineReservation,
    check_quantity,
    decide_lines,
    new_items,
)
from sqlitekit import write

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS inventory (
        sku      TEXT PRIMARY KEY,  -- the SKU
        document TEXT NOT NULL,     -- the StockItem as camelCase JSON, holds included
        etag     TEXT NOT NULL      -- replaced by every write
    )
    """,
)


def _document(item: StockItem) -> str:
    return item.model_dump_json()


def _item(conn: Any, sku: str) -> StockItem | None:
    row = conn.execute("SELECT document, etag FROM inventory WHERE sku = ?", (sku,)).fetchone()
    if row is None:
        return None
    return StockItem.model_validate_json(row["document"]).model_copy(
        update={"etag": row["etag"]})


class SqliteInventoryStore(ConditionalInventory, SqliteAdapter):
    """Inventory in a SQLite file."""

    STORE = "inventory"
    SCHEMA = _SCHEMA

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        SqliteAdapter.__init__(self, path, synchronous=synchronous)

    def load(self, stock: Mapping[str, int],
             prices: Mapping[str, Decimal] | None = None) -> int:
        """See :meth:`orders.stores.inventory.InventoryStore.load`; one transaction."""
        items = new_items(stock, prices)
        self._db.count("write", len(items))
        with self._db.use() as conn, write(conn):
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO inventory (sku, document, etag) VALUES (?, ?, ?) "
                "ON CONFLICT (sku) DO NOTHING",
                [(i.sku, _document(i), uuid.uuid4().hex) for i in items])
            return conn.total_changes - before

    def items(self) -> Iterator[StockItem]:
        """Yield every item in SKU order."""
        with self._db.use("query") as conn:
            rows = conn.execute("SELECT document, etag FROM inventory ORDER BY sku").fetchall()
        for row in rows:
            yield StockItem.model_validate_json(row["document"]).model_copy(
                update={"etag": row["etag"]})

    def reserve_lines(self, lines: Sequence[Line], *, by: str | None = None
                      ) -> list[LineReservation]:
        """Reserve the lines in one write transaction; see the port.

        Under SQLite's write lock every line is decided once on one read of its SKU's item,
        and each changed item is written once: one commit per order, and a crash leaves none
        taken (X7).
        """
        for _, _, quantity in lines:
            check_quantity(quantity)
        results, written = self._db.transact(partial(self._reserve_in, lines, by))
        # Cosmos DB: a point read per SKU and a conditional replace per changed SKU.
        self._db.count("point_read", len({sku for sku, _, _ in lines}))
        self._db.count("write", written)
        return results

    def _reserve_in(self, lines: Sequence[Line], by: str | None,
                    conn: sqlite3.Connection) -> tuple[list[LineReservation], int]:
        """``reserve_lines``'s transaction: each line's outcome, and how many items changed."""
        items = {sku: _item(conn, sku) for sku in dict.fromkeys(s for s, _, _ in lines)}
        results, changed = decide_lines(items, lines, by)
        for item in changed.values():
            self._write_item(conn, item)
        return results, len(changed)

    @staticmethod
    def _write_item(conn: Any, item: StockItem) -> None:
        conn.execute("UPDATE inventory SET document = ?, etag = ? WHERE sku = ?",
                     (_document(item), uuid.uuid4().hex, item.sku))

    def _read(self, sku: str) -> StockItem | None:
        with self._db.use("point_read") as conn:
            return _item(conn, sku)

    def _replace(self, item: StockItem) -> bool:
        with self._db.use("write") as conn, write(conn):
            cursor = conn.execute(
                "UPDATE inventory SET document = ?, etag = ? WHERE sku = ? AND etag = ?",
                (_document(item), uuid.uuid4().hex, item.sku, item.etag))
            return cursor.rowcount == 1

    def _insert(self, item: StockItem) -> bool:
        with self._db.use("write") as conn, write(conn):
            cursor = conn.execute(
                "INSERT INTO inventory (sku, document, etag) VALUES (?, ?, ?) "
                "ON CONFLICT (sku) DO NOTHING", (item.sku, _document(item), uuid.uuid4().hex))
            return cursor.rowcount == 1
