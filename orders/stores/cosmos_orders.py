"""Order database on Azure Cosmos DB: ``create_item``, and on 409 read and compare."""

from __future__ import annotations

from orders.models import Order
from orders.stores._cosmos import (
    CosmosAdapter,
    create_document,
    from_document,
    read_document,
    still_there,
    to_document,
)
from orders.stores._records import keep_order
from orders.stores.ports import Created


class CosmosOrderStore(CosmosAdapter):
    """Order database in a Cosmos DB container (S1, X5)."""

    def create_if_absent(self, order: Order) -> Created[Order]:
        """See :meth:`orders.stores.ports.OrderStore.create_if_absent`."""
        what = f"create order {order.order_key!r}"
        if create_document(self._container, to_document(order, order.order_key),
                           what) is not None:
            return Created(order, created=True)
        # 409: the id exists; compare
        return keep_order(still_there(self.get(order.order_key), what, "order"), order)

    def get(self, order_key: str) -> Order | None:
        """Return the order (a point read), or None."""
        document = read_document(self._container, order_key, order_key,
                                 f"read order {order_key!r}")
        if document is None:
            return None
        return Order.model_validate(from_document(document, with_etag=False))
