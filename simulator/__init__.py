"""Simulated remote PAYMENT and SHIPPING APIs for local runs and tests (X1, A2, X7, X2).

See docs/simulator.md.
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
