"""The local host's time source: the shared :mod:`clocks` module, re-exported.

The clock lives outside ``devhost`` because the deployed app uses it too (deadlines,
circuit breakers), and ``devhost`` is never deployed.
"""

from clocks import Clock, ManualClock, SystemClock

__all__ = ["Clock", "ManualClock", "SystemClock"]
