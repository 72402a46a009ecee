"""Replay checks before deploy: recorded histories replayed against the app's current code.

:mod:`.history` rebuilds replayable events from the Durable HTTP API's history JSON;
:mod:`.check` replays them through the SDK as the host does and reports, per instance, the
first task where the new code decides otherwise, with DTFx's non-determinism text.
"""
