"""Function and event names, defined once and imported by every caller (STYLE 2).

Starters, orchestrators and tests import these constants instead of repeating strings, so
renaming a function cannot silently break a caller.
"""

ORDER_WORKFLOW = "order_workflow"
"""The orchestrator that processes one attempt of one order."""

BEGIN_ATTEMPT = "begin_attempt"
LOAD_ORDER = "load_order"
RESERVE_INVENTORY = "reserve_inventory"
SEND_AGENT_REQUEST = "send_agent_request"
FINISH_ATTEMPT = "finish_attempt"
PUBLISH_STATUS = "publish_status"
ALERT_OPERATOR = "alert_operator"

ORDERS_QUEUE = "orders"
PAYMENT_REQUESTS_QUEUE = "payment-requests"
SHIPPING_REQUESTS_QUEUE = "shipping-requests"
AGENT_REPLIES_QUEUE = "agent-replies"
OPERATOR_ALERTS_QUEUE = "operator-alerts"

REQUEST_QUEUES = {"payment": PAYMENT_REQUESTS_QUEUE, "shipping": SHIPPING_REQUESTS_QUEUE}
"""Request queue of each agent (one agent per remote service, SPEC A1)."""

SERVICEBUS_CONNECTION = "SERVICEBUS"
"""Connection setting prefix of every Service Bus binding (identity-based:
``SERVICEBUS__fullyQualifiedNamespace``)."""
