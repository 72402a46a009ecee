"""Agents: the code that calls one remote service on behalf of the scheduler (SPEC A1-A5).

May import: ``orders`` (core) and ``clocks``; never another role package or ``ops``.
"""
