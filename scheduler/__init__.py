"""The scheduler (S1-S9): submission, the starters and the reply handler.

It starts orchestrators by name (:mod:`orders.names`). May import ``orders`` and
``clocks``; never ``supervisor``, ``agents`` or ``ops``.
"""
