"""The scheduler (SPEC S1-S9): submission, the starter and the reply handler.

The orchestrator and its activities live in :mod:`orders.orchestrators` and
:mod:`orders.activities`.
"""
