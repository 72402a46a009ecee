"""The scheduler (SPEC S1-S9): submission, the starters and the reply handler.

The orchestrators and their activities live in :mod:`orchestrators` and
:mod:`activities`; the scheduler starts them by name (:mod:`orders.names`).

May import: ``orders`` (core) and ``clocks``; never ``supervisor``, ``agents`` or ``ops``.
"""
