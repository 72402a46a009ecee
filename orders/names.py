"""Function and event names, defined once and imported by every caller (STYLE 2).

Starters, orchestrators and tests import these constants instead of repeating strings, so
renaming a function cannot silently break a caller. Activity names are declared with their
contracts, in :mod:`orders.models.activities`.
"""

ORDER_WORKFLOW = "order_workflow"
"""The orchestrator that processes one attempt of one order."""
COMPENSATION_WORKFLOW = "compensation_workflow"
"""The orchestrator that undoes an order's completed steps, one attempt (SPEC S9)."""

ORDERS_QUEUE = "orders"
PAYMENT_REQUESTS_QUEUE = "payment-requests"
SHIPPING_REQUESTS_QUEUE = "shipping-requests"
AGENT_REPLIES_QUEUE = "agent-replies"
OPERATOR_ALERTS_QUEUE = "operator-alerts"

WORKFLOW_REMOTE_STEPS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (("payment", "charge"), ("shipping", "ship")),
    2: (("shipping", "ship"), ("payment", "charge")),
}
"""The remote steps (service, operation) of each registered workflow version, in order
(SPEC X6): version 1 charges then ships, version 2 ("charge on dispatch") ships then
charges. The workflow, the retry budget and compensation read them from here."""

REQUEST_QUEUES = {"payment": PAYMENT_REQUESTS_QUEUE, "shipping": SHIPPING_REQUESTS_QUEUE}
"""Request queue of each agent (one agent per remote service, SPEC A1)."""

SERVICEBUS_CONNECTION = "SERVICEBUS"
"""Connection setting prefix of every Service Bus binding (identity-based:
``SERVICEBUS__fullyQualifiedNamespace``)."""
