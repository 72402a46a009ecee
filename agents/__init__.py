"""Agents: call one remote service on behalf of the scheduler (A1-A5).

May import ``orders`` and ``clocks``; never another role package or ``ops``.
"""
