"""Orchestrator episodes: feed the SDK its history, turn the actions it returns into work.

The SDK replays the orchestrator itself; this package does what the Functions host and
the Durable extension do around it (D3, D4).
"""
