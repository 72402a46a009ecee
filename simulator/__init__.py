"""Simulated remote PAYMENT and SHIPPING APIs for local runs and tests.

The agents of the order pipeline call two remote services; on a developer's machine this
package stands in for them. It honours ``Idempotency-Key`` like Stripe, injects every fault
an agent must survive (SPEC X1) under knobs a test can turn at runtime, and writes each side
effect to a SQLite ledger so tests can prove "exactly once" (SPEC A2, X7) and count calls per
order against the retry budget (SPEC X2).
"""

from simulator.app import create_app
from simulator.config import Decline, FaultUpdate, ServiceFaults, SimulatorConfig
from simulator.ledger import Ledger, RequestCount, SideEffect
from simulator.server import serve_in_thread

__all__ = [
    "Decline",
    "FaultUpdate",
    "Ledger",
    "RequestCount",
    "ServiceFaults",
    "SideEffect",
    "SimulatorConfig",
    "create_app",
    "serve_in_thread",
]
