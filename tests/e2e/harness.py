"""An order-processing system on one machine, in one test process, driven by drain mode.

The real ``function_app.py`` runs under the local host with a ManualClock; the remote
services are the simulator on a real loopback port sharing that clock; orders arrive as
Service Bus messages on each client's own queue ``orders-<clientId>`` (clients ``acme``
and ``globex``, ``ORDER_CLIENTS``). Inside the service an order is known by its key
``<clientId>~<OrderID>`` (:func:`key`): the state store, the ledger's order ids, instance
ids and alerts use it; status messages carry the client's OrderID.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from azurekit.services import catalogue
from bench.statements import SETTINGS as RUN_SETTINGS
from devhost.testing import DurableHost
from orders import runtime
from orders.lifecycle.ids import order_key
from orders.models import ClientOrder, OrderLine, ProcessState
from orders.models.messages import SubmitOrder
from orders.settings import load_settings
from simulator.app import create_app
from simulator.config import FaultUpdate
from simulator.ledger import Ledger
from simulator.server import serve_in_thread

REPO = Path(__file__).resolve().parents[2]
TEST_SETTINGS = {**RUN_SETTINGS, "ORDER_CLIENTS": "acme,globex"}
"""The statement count's settings (``bench.statements``, one client), with two clients."""
DEFAULT_CLIENT = "acme"


def key(order: ClientOrder | str, client_id: str = DEFAULT_CLIENT) -> str:
    """The order key of ``order`` (a client's order or an OrderID) submitted by ``client_id``."""
    order_id = order if isinstance(order, str) else order.order_id
    return order_id if "~" in order_id else order_key(client_id, order_id)


def make_order(n: int, lines: int = 2) -> ClientOrder:
    """A valid client's order with ``lines`` lines and a total computed from them."""
    order_lines = [OrderLine(sku=f"SKU-{n}-{i}", quantity=i + 1, unit_price=Decimal("10.00"))
                   for i in range(lines)]
    total = sum(Decimal(li.quantity) * li.unit_price for li in order_lines)
    from datetime import UTC, datetime

    return ClientOrder(order_id=f"ORD-{n:05d}", customer_id=f"CUST-{n % 7}", currency="USD",
                       lines=order_lines, total_price=total,
                       created_at=datetime(2029, 12, 31, tzinfo=UTC))


class System:
    """The app under the local host plus the simulator, with one ManualClock.

    The host is :class:`devhost.testing.DurableHost`, as a user's ``durable_host`` fixture
    gives it (``self.durable``: start, status, history, mocks).
    """

    def __init__(self, tmp_path: Path, clock, monkeypatch, faults: dict | None = None,
                 settings: dict | None = None, service_paths: dict | None = None) -> None:
        self.clock = clock
        self.stack = ExitStack()
        self.ledger_path = tmp_path / "ledger.sqlite"
        sim = create_app(FaultUpdate.model_validate(faults or {}), clock, self.ledger_path)
        self.sim_app = sim
        url = self.stack.enter_context(serve_in_thread(sim))
        # Each service at its own base URL (/payment, /shipping...), so an agent that
        # calls another service's URL meets 404s and its test fails.
        paths = {name: f"/{name}" for name in catalogue().services} | (service_paths or {})
        urls = {spec.url_setting: url + paths[name]
                for name, spec in catalogue().services.items()}
        for key, value in {**TEST_SETTINGS, **(settings or {}), **urls}.items():
            monkeypatch.setenv(key, value)
        load_settings.cache_clear()
        runtime.use(None)
        # The public test bench of durable-devhost (docs/testing.md), so every e2e run
        # exercises it.
        self.durable = DurableHost(REPO, tmp_path / "data", clock=clock)
        self.host = self.durable.host
        self.engine = self.host.engine
        self.ledger = Ledger(self.ledger_path)

    def close(self) -> None:
        """Stop the host and the simulator."""
        self.durable.close()
        runtime.use(None)
        load_settings.cache_clear()
        self.ledger.close()
        self.stack.close()

    @property
    def services(self):
        """The app's services (stores, sender) as the functions see them."""
        return runtime.services()

    def submit(self, order: ClientOrder, client_id: str = DEFAULT_CLIENT,
               message_id: str | None = None, body: bytes | None = None) -> None:
        """Send an order message to the client's own queue ``orders-<clientId>``."""
        msg = SubmitOrder(client_id=client_id, reply_to=f"replies-{client_id}", order=order)
        self.engine.send(f"orders-{client_id}", body or msg.model_dump_json(by_alias=True),
                         message_id=message_id or order.order_id)

    @contextmanager
    def paused(self, queue: str) -> Iterator[None]:
        """Stop delivering ``queue`` to its function for the duration of the block."""
        from devhost.triggers.servicebus import ServiceBusTriggerPoller

        held = [p for p in self.host.pollers
                if isinstance(p, ServiceBusTriggerPoller) and p.queue == queue]
        for p in held:
            self.host.pollers.remove(p)
        try:
            yield
        finally:
            self.host.pollers.extend(held)

    def run(self, seconds: float) -> None:
        """Drain all work, moving the clock forward up to ``seconds`` from now."""
        self.host.run_until_idle(advance_clock=True,
                                 until=self.clock.now() + timedelta(seconds=seconds))

    def state(self, order_id: str, client_id: str = DEFAULT_CLIENT):
        """The state record of ``client_id``'s OrderID ``order_id`` (or of a key)."""
        return self.services.stores.states.get(key(order_id, client_id))

    def states(self, order_ids, client_id: str = DEFAULT_CLIENT) -> Counter:
        """Count of ProcessState over ``client_id``'s ``order_ids``."""
        return Counter(self.state(o, client_id).process_state for o in order_ids)

    def replies(self, client_id: str = DEFAULT_CLIENT) -> list[dict]:
        """Every status message on the client's reply queue (peeked)."""
        queue = f"replies-{client_id}"
        return [json.loads(m.body) for m in self.engine.peek(queue, 100_000)]

    def alerts(self) -> list[dict]:
        """Every operator alert (peeked)."""
        return [json.loads(m.body) for m in self.engine.peek("operator-alerts", 10_000)]

    def effects(self, kind: str | None = None, order_id: str | None = None,
                client_id: str = DEFAULT_CLIENT) -> list:
        """Side effects in the simulator's ledger (of ``client_id``'s ``order_id``, if given)."""
        return self.ledger.side_effects(
            kind=kind, order_key=None if order_id is None else key(order_id, client_id))


__all__ = ["ProcessState", "System", "key", "make_order"]
