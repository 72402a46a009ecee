"""The order service's core: what every role stands on, and nothing that runs on its own.

Names and settings (:mod:`orders.names`, :mod:`orders.settings`), the versioned contracts
(:mod:`orders.models`), the order's lifecycle, the ports with their adapters
(:mod:`orders.stores`, :mod:`orders.messaging`), what the workflow uses to observe itself
(:mod:`orders.observability`), the compensation plan (:mod:`orders.compensation`), the
retry budget and queue limits (:mod:`orders.budget`, :mod:`orders.queues`) and the wiring
of services for a process (:mod:`orders.runtime`, :mod:`orders.startup`).

May import: ``clocks``, ``sqlitekit`` and third-party libraries; never a role package
(``scheduler``, ``agents``, ``supervisor``, ...) nor ``ops``.

Layers, from the ground up; each package imports only from the layers below it:
``clocks``, ``sqlitekit`` -> ``orders`` (names, settings, contracts, lifecycle, stores,
messaging, observability, compensation plan, budget) -> ``agents``, ``activities``,
``orchestrators`` -> ``scheduler``, ``supervisor`` -> ``ops`` -> ``function_app.py``.
The local host (``devhost``) is never imported by any of them at module level.
"""
