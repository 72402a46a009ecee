"""The order service's core: what every role stands on, and nothing that runs on its own.

Names and settings (:mod:`orders.names`, :mod:`orders.settings`), the root of every error
with its ``retryable`` flag (:mod:`orders.errors`), the versioned contracts
(:mod:`orders.models`), the order's lifecycle, the ports with their adapters
(:mod:`orders.stores`, :mod:`orders.messaging`), what the workflow uses to observe itself
(:mod:`orders.observability`), the compensation plan (:mod:`orders.compensation`), the
retry budget and queue limits (:mod:`orders.budget`, :mod:`orders.queues`) and the wiring
of services for a process (:mod:`orders.runtime`, :mod:`orders.startup`).

May import: ``clocks``, ``sqlitekit``, ``durable_http``, ``azurekit``, ``sqlitebus`` and
third-party libraries; never a role package (``scheduler``, ``agents``, ``supervisor``,
...) nor ``ops``.

Layers, from the ground up; each package imports only from the layers below it:
``clocks``, ``sqlitekit``, ``durable_http``, ``azurekit`` -> ``sqlitebus`` -> ``orders``
(names, settings, contracts, lifecycle, stores, messaging, observability, compensation
plan, budget) -> ``agents``, ``activities``, ``orchestrators`` -> ``scheduler``,
``supervisor`` -> ``ops`` -> ``function_app.py``. None of them imports the local host
(``devhost``) or the rest of the workshop, in any form (``tests/test_structure.py``).
"""
