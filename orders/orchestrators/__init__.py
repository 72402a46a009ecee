"""Orchestrators: the order workflow, one instance per attempt (SPEC S4-S7)."""
