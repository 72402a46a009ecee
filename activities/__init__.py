"""Activities of the order and compensation workflows: every step that touches a store or a queue.

Each is idempotent (SPEC X7): it may run more than once with the same input and the
outcome is the same (fenced conditional updates, MessageIds stable per step, compensation
log entries keyed on OrderID + step). Each is declared, with its name and contracts, in
``orders.models.activities``; its body binds to the declaration with
:func:`activities.declared.implements`.

May import: ``orders`` (core) and ``clocks``; never ``scheduler``, ``supervisor``,
``orchestrators`` or ``ops``.
"""
