"""Order database on Azure Cosmos DB (the Azure adapter of the order store port).

Implements :class:`orders.stores.ports.OrderStore` on one container partitioned on
``/orderId``. Create-if-absent is ``create_item``; on 409 the stored order is read and
compared, so a redelivered submission is accepted and a conflicting one changes nothing.
"""

from __future__ import annotations

from azure.cosmos import ContainerProxy

from orders.models import Order
from orders.stores._cosmos import from_document, to_document, translated
from orders.stores.errors import ConflictError, NotFoundError, StoreError
from orders.stores.ports import Created


class CosmosOrderStore:
    """Order database in a Cosmos DB container (SPEC S1, X5).

    Parameters
    ----------
    container : azure.cosmos.ContainerProxy
        Container partitioned on ``/orderId`` (see :func:`orders.stores.create_stores`).
    """

    def __init__(self, container: ContainerProxy) -> None:
        self._container = container

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its OrderID exists; equal data again is accepted.

        Raises
        ------
        ConflictError
            If a different order is stored under the same OrderID (it stays unchanged).
        TransientStoreError
            On throttling (429) or unavailability.
        """
        what = f"create order {order.order_id!r}"
        try:
            with translated(what):
                self._container.create_item(body=to_document(order, order.order_id))
            return Created(order, created=True)
        except ConflictError:
            pass  # 409: the id exists; compare below
        existing = self.get(order.order_id)
        if existing is None:
            raise StoreError(f"{what}: Cosmos DB reported a conflict but the order is gone")
        if not existing.same_data(order):
            raise ConflictError(
                f"orderId {order.order_id!r}: a different order is already stored under "
                "this OrderID; nothing was overwritten (SPEC S1)"
            )
        return Created(existing, created=False)

    def get(self, order_id: str) -> Order | None:
        """Return the order stored under ``order_id`` (a point read), or None."""
        try:
            with translated(f"read order {order_id!r}"):
                document = self._container.read_item(item=order_id, partition_key=order_id)
        except NotFoundError:
            return None
        return Order.model_validate(from_document(document, with_etag=False))

    def close(self) -> None:
        """Nothing to release: the client's connection pool belongs to the caller."""
