"""Inventory on Azure Cosmos DB, one container partitioned on ``/sku``.

The item's ``id`` is its SKU (point reads); a write is ``replace_item`` with the read ETag
(IfNotModified, 412 when another writer came first). Holds live in the item, so a line's
decrement and its hold are one atomic write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from azure.core import MatchConditions

from orders.models.inventory import StockItem
from orders.stores._cosmos import (
    CosmosAdapter,
    create_document,
    from_document,
    read_document,
    to_document,
    translated,
)
from orders.stores.errors import PreconditionFailedError
from orders.stores.inventory import ConditionalInventory, new_items

PARTITION_KEY_PATH = "/sku"
"""Partition key of the inventory container: one logical partition per SKU."""


def _item(document: dict[str, Any]) -> StockItem:
    return StockItem.model_validate(from_document(document, with_etag=True))


class CosmosInventoryStore(ConditionalInventory, CosmosAdapter):
    """Inventory in a Cosmos DB container partitioned on ``/sku``."""

    def load(self, stock: Mapping[str, int],
             prices: Mapping[str, Decimal] | None = None) -> int:
        """See :meth:`orders.stores.inventory.InventoryStore.load`; one ``create_item`` per SKU."""
        return sum(self._insert(item) for item in new_items(stock, prices))

    def items(self) -> Iterator[StockItem]:
        """Yield every item (a cross-partition query)."""
        with translated("read the inventory"):
            documents = self._container.query_items(
                "SELECT * FROM c", enable_cross_partition_query=True)
            for document in documents:
                yield _item(document)

    def _read(self, sku: str) -> StockItem | None:
        document = read_document(self._container, sku, sku, f"read stock of {sku!r}")
        return None if document is None else _item(document)

    def _replace(self, item: StockItem) -> bool:
        try:
            with translated(f"replace stock of {item.sku!r}"):
                self._container.replace_item(
                    item=item.sku, body=to_document(item, item.sku), etag=item.etag,
                    match_condition=MatchConditions.IfNotModified)
        except PreconditionFailedError:
            return False
        return True

    def _insert(self, item: StockItem) -> bool:
        return create_document(self._container, to_document(item, item.sku),
                               f"create stock of {item.sku!r}") is not None
