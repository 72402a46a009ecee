"""``python -m bench.statements --orders N``: trips per order, counts that do not depend on load.

Runs N orders of this repository's ``function_app.py`` under the local host in this process,
in drain mode (:meth:`devhost.run.host.LocalHost.run_until_idle` with a ManualClock, so the
same code gives the same counts on any machine, busy or idle), with the simulated services
on a loopback port sharing that clock, and reports per order:

- SQL statements executed, by SQLite file, and the host's sum (the simulator's file left
  out): every ``sqlite3.connect`` of the run is traced with ``set_trace_callback``, one
  count per statement run, each row of an ``executemany`` and each BEGIN/COMMIT included;
- context switches of this process (``getrusage``, all threads, the simulator's server
  thread among them), voluntary (the trips) and involuntary (preemption: load) apart.

Wall time is not reported: on a shared machine it measures the neighbours.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

SIMULATOR_FILES = frozenset({"ledger.sqlite"})
"""Files of the simulated remote services, left out of the host's total."""

SETTINGS = {
    "ORDER_DEADLINE_S": "30", "START_GRACE_S": "60", "MAX_FAILURES": "3",
    "RETRY_HOLD_BASE_S": "1", "AGENT_MAX_ATTEMPTS": "4", "AGENT_CALL_TIMEOUT_S": "0.5",
    "CIRCUIT_FAILURE_THRESHOLD": "50", "CIRCUIT_COOL_DOWN_S": "5",
    "STARTER_SCHEDULE": "*/1 * * * * *", "SUPERVISOR_SCHEDULE": "*/2 * * * * *",
    "ORDER_CLIENTS": "acme",
}
"""App settings of the run, which the end-to-end tests' harness takes too (one-second
starter, no faults; ``tests/e2e/harness.py`` adds a second client)."""


class StatementCounter:
    """Count statements per SQLite file name of every connection opened while installed."""

    def __init__(self) -> None:
        self.by_file: Counter[str] = Counter()
        self._lock = threading.Lock()

    def tracer(self, path: Any) -> Callable[[str], None]:
        """Return a trace callback adding to ``path``'s file name."""
        name = Path(str(path)).name or str(path)

        def trace(_statement: str) -> None:
            with self._lock:
                self.by_file[name] += 1

        return trace

    @contextmanager
    def installed(self) -> Iterator[StatementCounter]:
        """Trace every connection ``sqlite3.connect`` opens inside the block."""
        original = sqlite3.connect

        def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = original(database, *args, **kwargs)
            conn.set_trace_callback(self.tracer(database))
            return conn

        sqlite3.connect = connect  # type: ignore[assignment]
        try:
            yield self
        finally:
            sqlite3.connect = original


def context_switches() -> tuple[int, int]:
    """Return this process's voluntary and involuntary context switches so far (all threads).

    Voluntary ones (a thread waits: a lock, a queue, a socket, fsync) are the trips; the
    involuntary ones (preemption) grow with the machine's load.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw, usage.ru_nivcsw


def _order(n: int) -> Any:
    from orders.models import ClientOrder, OrderLine

    lines = tuple(OrderLine(sku=f"SKU-{n}-{i}", quantity=i + 1, unit_price=Decimal("10.00"))
                  for i in range(2))
    return ClientOrder(order_id=f"ORD-{n:05d}", customer_id=f"CUST-{n % 7}", currency="USD",
                       lines=lines, total_price=sum((Decimal(li.quantity) * li.unit_price
                                                     for li in lines), Decimal(0)),
                       created_at=datetime(2029, 12, 31, tzinfo=UTC))


def measure(orders: int, data_dir: Path) -> dict[str, Any]:
    """Run ``orders`` orders in drain mode; return statements and context switches per order."""
    from azurekit.services import catalogue
    from clocks import ManualClock
    from devhost.run.runtime import build_host
    from orders import runtime
    from orders.models.messages import SubmitOrder
    from orders.settings import load_settings
    from simulator.app import create_app
    from simulator.config import FaultUpdate
    from simulator.server import serve_in_thread

    clock = ManualClock(datetime(2030, 1, 1, tzinfo=UTC))
    counter = StatementCounter()
    with ExitStack() as stack:
        stack.enter_context(counter.installed())
        url = stack.enter_context(serve_in_thread(
            create_app(FaultUpdate.model_validate({}), clock, data_dir / "ledger.sqlite")))
        urls = {spec.url_setting: f"{url}/{name}"
                for name, spec in catalogue().services.items()}
        stack.callback(runtime.use, None)  # forget the run's services and settings after it
        stack.callback(load_settings.cache_clear)
        os.environ.update({**SETTINGS, **urls})
        load_settings.cache_clear()
        runtime.use(None)
        host = build_host(REPO, data_dir / "data", clock=clock)
        host.start_http()  # outside callers' API, as under `devhost start`
        stack.callback(host.stop)
        host.run_until_idle(advance_clock=True, until=clock.now() + timedelta(seconds=2))
        # The catalogue the submission prices each line against (PRICE_FROM_CATALOGUE), with
        # stock for every order: the full path of a fault-free order, as in the demo.
        lines = [line for n in range(orders) for line in _order(n).lines]
        runtime.services().stores.inventory.load({li.sku: li.quantity for li in lines},
                                                  {li.sku: li.unit_price for li in lines})
        counter.by_file.clear()
        switches = context_switches()
        for n in range(orders):
            message = SubmitOrder(client_id="acme", reply_to="replies-acme", order=_order(n))
            host.engine.send("orders-acme", message.model_dump_json(by_alias=True),
                             message_id=message.client_order_id)
        host.run_until_idle(advance_clock=True, until=clock.now() + timedelta(seconds=30))
        voluntary, involuntary = (b - a for a, b in zip(switches, context_switches(),
                                                            strict=True))
        records = [runtime.services().stores.states.get(f"acme~ORD-{n:05d}")
                   for n in range(orders)]
        states = Counter("missing" if r is None else str(r.process_state) for r in records)
    by_file = {name: round(count / orders, 1) for name, count in sorted(counter.by_file.items())}
    return {"orders": orders, "states": dict(states),
            "host_statements_per_order": round(sum(
                n for name, n in counter.by_file.items() if name not in SIMULATOR_FILES)
                / orders, 1),
            "statements_per_order_by_file": by_file,
            "voluntary_context_switches_per_order": round(voluntary / orders, 1),
            "involuntary_context_switches_per_order": round(involuntary / orders, 1)}


def main(argv: list[str] | None = None) -> int:
    """Parse ``--orders`` (default 50), run, print the figures as JSON; 1 if an order is open."""
    parser = argparse.ArgumentParser(prog="python -m bench.statements", description=__doc__)
    parser.add_argument("--orders", type=int, default=50, help="orders to run (>= 1)")
    args = parser.parse_args(argv)
    if args.orders < 1:
        parser.error("--orders: must be at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-statements-") as tmp:
        result = measure(args.orders, Path(tmp))
    print(json.dumps(result, indent=1))
    return 0 if set(result["states"]) <= {"Processed", "ProcessState.PROCESSED"} else 1


if __name__ == "__main__":
    sys.exit(main())
