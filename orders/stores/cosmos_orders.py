"""Order database on Azure Cosmos DB (the Azure adapter of the order store port).

Implements :class:`orders.stores.ports.OrderStore` on one container partitioned on
``/orderId``. Create-if-absent is ``create_item``; on 409 the stored order is read and
compared, so a redelivered submission is accepted and a conflicting one changes nothing.
"""

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
    """Order database in a Cosmos DB container (SPEC S1, X5); see :class:`CosmosAdapter`."""

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its OrderID exists; equal data again is accepted.

        See :meth:`orders.stores.ports.OrderStore.create_if_absent`; a
        :class:`~orders.stores.errors.TransientStoreError` means throttling (429) or
        unavailability.
        """
        what = f"create order {order.order_id!r}"
        if create_document(self._container, to_document(order, order.order_id),
                           what) is not None:
            return Created(order, created=True)
        # 409: the id exists; compare
        return keep_order(still_there(self.get(order.order_id), what, "order"), order)

    def get(self, order_id: str) -> Order | None:
        """Return the order stored under ``order_id`` (a point read), or None."""
        document = read_document(self._container, order_id, order_id,
                                 f"read order {order_id!r}")
        if document is None:
            return None
        return Order.model_validate(from_document(document, with_etag=False))
