"""The host's time source, :mod:`clocks`: outside ``devhost``, since the deployed app uses it."""

from clocks import Clock, ManualClock, SystemClock

__all__ = ["Clock", "ManualClock", "SystemClock"]
