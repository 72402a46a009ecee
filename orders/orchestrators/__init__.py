"""Orchestrators: the order workflow and the compensation workflow.

One order workflow instance per attempt (SPEC S4-S7, X6), one compensation workflow
instance per compensation attempt (SPEC S9).
"""
