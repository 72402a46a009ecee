"""Agents: the code that calls one remote service on behalf of the scheduler (SPEC A1-A5)."""
