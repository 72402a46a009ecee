"""Choose the backend of the order database, state store, compensation log and inventory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clocks import Clock
from orders.stores.inventory import InventoryStore
from orders.stores.ports import CompensationLog, OrderStore, StateStore

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

BACKENDS = ("sqlite", "cosmos")


@dataclass(frozen=True)
class Stores:
    """The stores of one deployment; ``release`` frees what they share (a Cosmos DB client)."""

    orders: OrderStore
    states: StateStore
    compensation: CompensationLog
    inventory: InventoryStore
    release: Callable[[], None] | None = None

    def __enter__(self) -> Stores:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the stores and what they share."""
        self.orders.close()
        self.states.close()
        self.compensation.close()
        self.inventory.close()
        if self.release is not None:
            self.release()


def create_stores(
    backend: str,
    *,
    orders_path: str | Path | None = None,
    state_path: str | Path | None = None,
    compensation_path: str | Path | None = None,
    inventory_path: str | Path | None = None,
    endpoint: str | None = None,
    database: str | None = None,
    credential: TokenCredential | str | None = None,
    orders_container: str = "orders",
    state_container: str = "states",
    compensation_container: str = "compensation",
    inventory_container: str = "inventory",
    create_containers: bool = False,
    connection_verify: bool = True,
    clock: Clock | None = None,
) -> Stores:
    """Build the stores for ``backend`` (``"sqlite"`` or ``"cosmos"``).

    SQLite: ``orders_path`` and ``state_path`` are required (may be one file, kept apart from
    the task hub, X4); compensation and inventory default to the state file, each its own
    table. Cosmos DB: ``endpoint`` and ``database`` are required; ``credential`` None means
    ``DefaultAzureCredential`` (X10), a key string is for the local test server only. Containers
    are partitioned on ``/orderId`` (inventory on ``/sku``); the compensation container wants
    ``defaultTtl: -1``. ``create_containers`` and ``connection_verify=False`` are for the local
    server only (in Azure, Bicep creates the containers).

    Raises
    ------
    ValueError
        For an unknown ``backend`` or a missing setting, naming it.
    """
    if backend == "sqlite":
        if orders_path is None or state_path is None:
            raise ValueError("orders_path and state_path: both are required for backend 'sqlite'")
        return _sqlite_stores(orders_path, state_path, compensation_path or state_path,
                              inventory_path or state_path, clock)
    if backend == "cosmos":
        if not endpoint or not database:
            raise ValueError("endpoint and database: both are required for backend 'cosmos'")
        return _cosmos_stores(endpoint, database, credential,
                              (orders_container, state_container, compensation_container,
                               inventory_container),
                              create_containers, connection_verify, clock)
    raise ValueError(f"backend: must be one of {', '.join(BACKENDS)}; got {backend!r}")


def _sqlite_stores(orders_path: str | Path, state_path: str | Path,
                   compensation_path: str | Path, inventory_path: str | Path,
                   clock: Clock | None) -> Stores:
    from orders.stores.sqlite_compensation import SqliteCompensationLog
    from orders.stores.sqlite_inventory import SqliteInventoryStore
    from orders.stores.sqlite_orders import SqliteOrderStore
    from orders.stores.sqlite_state import SqliteStateStore

    return Stores(
        orders=SqliteOrderStore(orders_path, clock=clock),
        states=SqliteStateStore(state_path, clock=clock),
        compensation=SqliteCompensationLog(compensation_path),
        inventory=SqliteInventoryStore(inventory_path),
    )


def _cosmos_stores(endpoint: str, database: str, credential: TokenCredential | str | None,
                   names: tuple[str, str, str, str], create: bool, verify: bool,
                   clock: Clock | None) -> Stores:
    from orders.stores._cosmos import container, open_client, open_database
    from orders.stores.cosmos_compensation import CosmosCompensationLog
    from orders.stores.cosmos_inventory import PARTITION_KEY_PATH as SKU_KEY
    from orders.stores.cosmos_inventory import CosmosInventoryStore
    from orders.stores.cosmos_orders import CosmosOrderStore
    from orders.stores.cosmos_state import CosmosStateStore

    client = open_client(endpoint, credential, connection_verify=verify)
    db = open_database(client, database, create_if_missing=create)
    orders_name, state_name, compensation_name, inventory_name = names
    return Stores(
        orders=CosmosOrderStore(container(db, orders_name, create_if_missing=create)),
        states=CosmosStateStore(container(db, state_name, create_if_missing=create),
                                clock=clock),
        compensation=CosmosCompensationLog(
            container(db, compensation_name, create_if_missing=create)),
        inventory=CosmosInventoryStore(container(db, inventory_name, create_if_missing=create,
                                                 partition_key_path=SKU_KEY)),
        release=client.close,
    )


def local_stores(data_dir: str | Path, clock: Clock | None = None) -> Stores:
    """Open the embedded (SQLite) stores of a local host's data folder.

    The one place that names their files, ``orders.sqlite`` and ``state.sqlite`` (the state
    file also holds the compensation log and the inventory).
    """
    data = Path(data_dir)
    return create_stores("sqlite", orders_path=data / "orders.sqlite",
                         state_path=data / "state.sqlite", clock=clock)
