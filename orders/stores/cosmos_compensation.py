"""Compensation log on Azure Cosmos DB.

An entry's ``id`` is ``<OrderID>:<step>``, so the database keeps one entry per order and
step. ``seq`` is the order's largest plus one, read just before the create: one order's
entries are written one after another, so at worst two writers give two entries the same
``seq`` (then ordered by write time). ``ttl`` is the retention in seconds: with container TTL
on, Cosmos DB expires entries (S9); :meth:`purge_expired` does it where TTL is off.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from orders.models import CompensationEntry, format_utc
from orders.stores._cosmos import (
    CosmosAdapter,
    create_document,
    from_document,
    read_document,
    still_there,
    translated,
)
from orders.stores._records import keep_step
from orders.stores.errors import NotFoundError
from orders.stores.ports import Created, check_count, check_now, check_one_order

_SECONDS_PER_DAY = 86_400


def _document(entry: CompensationEntry) -> dict[str, Any]:
    document = entry.model_dump(mode="json")
    document["id"] = f"{entry.order_key}:{entry.step.value}"
    document["ttl"] = entry.retention_days * _SECONDS_PER_DAY
    return document


def _entry(document: dict[str, Any]) -> CompensationEntry:
    data = from_document(document, with_etag=False)
    data.pop("ttl", None)
    return CompensationEntry.model_validate(data)


class CosmosCompensationLog(CosmosAdapter):
    """Compensation log in a Cosmos DB container (S9, X4)."""

    def record(self, entry: CompensationEntry) -> Created[CompensationEntry]:
        """See :meth:`orders.stores.ports.CompensationLog.record`."""
        return self.record_all([entry])[0]

    def record_all(self, entries: Sequence[CompensationEntry]
                   ) -> list[Created[CompensationEntry]]:
        """See :meth:`orders.stores.ports.CompensationLog.record_all`.

        One query of the order's log, then one create per unlogged entry, in order; a 409
        (written meanwhile) is read back and compared as :meth:`record` does. Not a
        transactional batch: the local test server refuses one, so it could not be tested.
        """
        check_one_order(entries)
        if not entries:
            return []
        logged = {e.step: e for e in self.entries(entries[0].order_key)}
        seq = max((e.seq or 0 for e in logged.values()), default=0)
        done: list[Created[CompensationEntry]] = []
        for entry in entries:
            existing = logged.get(entry.step)
            if existing is None:
                seq += 1
                stored = entry.model_copy(update={"seq": seq})
                what = f"log {entry.step.value} of order {entry.order_key!r}"
                if create_document(self._container, _document(stored), what) is not None:
                    done.append(Created(stored, created=True))
                    continue
                existing = still_there(self._read(entry), what, "entry")
            done.append(keep_step(existing, entry))  # ConflictError: the rest unwritten
        return done

    def entries(self, order_key: str) -> list[CompensationEntry]:
        """Return the order's entries in ``seq`` order (one single-partition query)."""
        with translated(f"read compensation log of {order_key!r}"):
            documents = list(self._container.query_items(
                # The WHERE clause repeats the partition key: the local test server ignores
                # the partition_key argument (see orders.stores.cosmos_state).
                "SELECT * FROM c WHERE c.orderId = @pk",
                parameters=[{"name": "@pk", "value": order_key}], partition_key=order_key))
        found = [_entry(document) for document in documents]
        return sorted(found, key=lambda e: (e.seq or 0, e.recorded_at))

    def purge_expired(self, now: datetime, limit: int) -> int:
        """Delete up to ``limit`` expired entries, one query page; see the port."""
        check_now(now)
        check_count("limit", limit)
        with translated("query expired compensation entries"):
            pages = self._container.query_items(
                "SELECT * FROM c WHERE c.retainUntil <= @now",
                parameters=[{"name": "@now", "value": format_utc(now)}],
                enable_cross_partition_query=True, max_item_count=limit).by_page()
            documents = list(next(pages, []))[:limit]
        deleted = 0
        for document in documents:
            try:
                with translated(f"delete compensation entry {document['id']!r}"):
                    self._container.delete_item(item=document["id"],
                                                partition_key=document["orderId"])
                deleted += 1
            except NotFoundError:
                continue  # deleted meanwhile (TTL or another purge)
        return deleted

    def _read(self, entry: CompensationEntry) -> CompensationEntry | None:
        document = read_document(self._container, f"{entry.order_key}:{entry.step.value}",
                                 entry.order_key, f"read compensation entry of {entry.order_key!r}")
        return None if document is None else _entry(document)
