"""Orchestrators: the order workflow and the compensation workflow.

One order workflow instance per attempt (SPEC S4-S7, X6), one compensation workflow
instance per compensation attempt (SPEC S9). Deterministic code (SPEC D4).

May import: ``orders`` (core: names, contracts, the compensation plan, replay-safe logs);
never stores, messaging or another role package: all I/O goes through activities.
"""
