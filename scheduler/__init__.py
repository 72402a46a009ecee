"""The scheduler (SPEC S1-S9): submission, the starters and the reply handler.

The reply handler raises events through :mod:`scheduler.durable_client`, which maps the
Durable Functions client's failures by HTTP status into typed, flagged errors.

The orchestrators and their activities live in :mod:`orchestrators` and
:mod:`activities`; the scheduler starts them by name (:mod:`orders.names`).

May import: ``orders`` (core) and ``clocks``; never ``supervisor``, ``agents`` or ``ops``.
"""
