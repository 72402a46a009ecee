"""Activities of both workflows: every step that touches a store or a queue.

Each is idempotent (X7) and declared in ``orders.models.activities``. May import
``orders`` and ``clocks``; never ``scheduler``, ``supervisor``, ``orchestrators``, ``ops``.
"""
