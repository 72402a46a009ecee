"""Orchestrator episodes: feed the SDK its history, turn the actions it returns into work.

The Durable Functions Python SDK replays the orchestrator itself; this package only does what
the Functions host and the Durable extension do around it (SPEC D3, D4).
"""
