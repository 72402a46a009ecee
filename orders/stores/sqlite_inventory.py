"""Embedded inventory: one stock item per SKU in a SQLite file (the local default).

Items are kept as their Cosmos DB JSON documents with an ETag column every write replaces,
so processes race on conditional updates exactly as they do on Cosmos DB. The SKUs of one
call are read with one SELECT, whatever their number; the holds an order ends (settle,
release, undo) are written with one conditional UPDATE of all its items.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

from orders.models.inventory import StockItem
from orders.stores._sqlite import SqliteAdapter
from orders.stores.inventory import (
    MAX_CONFLICT_RETRIES,
    Change,
    ConditionalInventory,
    Line,
    LineReservation,
    check_quantity,
    contended,
    decide_lines,
    keys_by_sku,
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
    return _items(conn, [sku])[sku]


def _items(conn: Any, skus: Iterable[str]) -> dict[str, StockItem | None]:
    """Read the items of ``skus`` (distinct) with one SELECT; None for a SKU without one."""
    wanted = list(skus)
    found: dict[str, StockItem | None] = dict.fromkeys(wanted)
    rows = conn.execute("SELECT sku, document, etag FROM inventory WHERE sku IN "
                        f"({', '.join('?' * len(wanted))})", wanted).fetchall()
    for row in rows:
        found[row["sku"]] = StockItem.model_validate_json(row["document"]).model_copy(
            update={"etag": row["etag"]})
    return found


def _write_items(conn: Any, items: Iterable[StockItem]) -> set[str]:
    """Replace each item whose stored ETag is still ``item.etag``, in one UPDATE.

    Each gets a new ETag; returns the SKUs written (the others changed since they were read).
    """
    values: list[str | None] = []
    for item in items:
        values += (item.sku, _document(item), uuid.uuid4().hex, item.etag)
    if not values:
        return set()
    rows = conn.execute(
        "UPDATE inventory SET document = v.column2, etag = v.column3 FROM (VALUES "
        f"{', '.join(['(?, ?, ?, ?)'] * (len(values) // 4))}) AS v "
        "WHERE inventory.sku = v.column1 AND inventory.etag = v.column4 RETURNING sku",
        values).fetchall()
    return {row["sku"] for row in rows}


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

        Under SQLite's write lock every line is decided once on one read of the items of its
        SKUs, and each changed item is written once: one commit per order, and a crash leaves
        none taken (X7).
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
        items = _items(conn, dict.fromkeys(s for s, _, _ in lines))
        results, changed = decide_lines(items, lines, by)
        for item in changed.values():
            self._write_item(conn, item)
        return results, len(changed)

    @staticmethod
    def _write_item(conn: Any, item: StockItem) -> None:
        conn.execute("UPDATE inventory SET document = ?, etag = ? WHERE sku = ?",
                     (_document(item), uuid.uuid4().hex, item.sku))

    def _per_sku(self, lines: Sequence[tuple[str, str]], change: Change) -> dict[str, int]:
        """As the port's release, settle and undo: one conditional write per SKU, batched.

        Each round reads the SKUs still to change with one SELECT (no transaction: one
        statement sees one state of the file) and writes their changed items with one
        conditional UPDATE; a SKU whose item changed in between is read and decided again,
        as :meth:`ConditionalInventory._per_sku` does SKU by SKU.
        """
        keys = keys_by_sku(lines)
        units: dict[str, int] = {}
        for _ in range(MAX_CONFLICT_RETRIES):
            with self._db.use() as conn:
                items = _items(conn, keys)
            self._db.count("point_read", len(keys))
            new: dict[str, StockItem] = {}
            decided: dict[str, dict[str, int]] = {}
            for sku, item in items.items():
                if item is None:
                    del keys[sku]
                    continue
                new_item, decided[sku] = change(item, keys[sku])
                if new_item is None:
                    units.update(decided[sku])
                    del keys[sku]
                else:
                    new[sku] = new_item
            written = self._db.transact(partial(_write_items, items=new.values()),
                                        one_statement=True) if new else set()
            self._db.count("write", len(new))
            for sku in written:
                units.update(decided[sku])
                del keys[sku]
            if not keys:
                return units
        raise contended(next(iter(keys)))

    def get_many(self, skus: Iterable[str]) -> dict[str, StockItem | None]:
        """See :meth:`orders.stores.inventory.InventoryStore.get_many`: one SELECT."""
        wanted = list(dict.fromkeys(skus))
        if not wanted:
            return {}
        with self._db.use() as conn:
            items = _items(conn, wanted)
        self._db.count("point_read", len(wanted))  # Cosmos DB: a point read each
        return items

    def _read(self, sku: str) -> StockItem | None:
        with self._db.use("point_read") as conn:
            return _item(conn, sku)

    def _replace(self, item: StockItem) -> bool:
        return item.sku in self._db.transact(partial(_write_items, items=[item]), "write",
                                             one_statement=True)

    def _insert(self, item: StockItem) -> bool:
        with self._db.use("write") as conn, write(conn):
            cursor = conn.execute(
                "INSERT INTO inventory (sku, document, etag) VALUES (?, ?, ?) "
                "ON CONFLICT (sku) DO NOTHING", (item.sku, _document(item), uuid.uuid4().hex))
            return cursor.rowcount == 1
