"""Orchestrators: the order workflow and the compensation workflow.

May import: ``orders`` (core: names, contracts, the compensation plan, replay-safe logs);
never stores, messaging or another role package: all I/O goes through activities.
"""
