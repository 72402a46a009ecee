"""Function and event names, defined once and imported by every caller.

Starters, orchestrators and tests import these constants instead of repeating strings, so
renaming a function cannot silently break a caller. Activity names are declared with their
contracts, in :mod:`orders.models.activities`.
"""

from azurekit.services import UnknownServiceError, catalogue

ORDER_WORKFLOW = "order_workflow"
"""The orchestrator that processes one attempt of one order."""
COMPENSATION_WORKFLOW = "compensation_workflow"
"""The orchestrator that undoes an order's completed steps, one attempt (S9)."""

ORDERS_QUEUE = "orders"
AGENT_REPLIES_QUEUE = "agent-replies"
OPERATOR_ALERTS_QUEUE = "operator-alerts"

WORKFLOW_REMOTE_STEPS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (("payment", "charge"), ("shipping", "ship")),
    2: (("shipping", "ship"), ("payment", "charge")),
    3: (("payment", "charge"), ("shipping", "ship")),
    4: (("shipping", "ship"), ("payment", "charge")),
    5: (("payment", "charge"), ("shipping", "ship")),
    6: (("shipping", "ship"), ("payment", "charge")),
    7: (("payment", "charge"), ("shipping", "ship")),
    8: (("shipping", "ship"), ("payment", "charge")),
    9: (("payment", "charge"), ("shipping", "ship")),
    10: (("shipping", "ship"), ("payment", "charge")),
}
"""The remote steps (service, operation) of each registered workflow version, in order
(X6): odd versions charge then ship, even versions ("charge on dispatch") ship then
charge; 3 and 4 run the steps of 1 and 2 in fewer activities, 5 and 6 in fewer still, and
7 and 8 in fewer again with one durable timer per attempt, and 9 and 10 as 7 and 8 acting
only on replies bound to their request. Each names a forward operation
of ``infra/services.json`` (checked at import). The workflow, the retry budget and
compensation read them from here."""


def _check_steps() -> None:
    for version, steps in WORKFLOW_REMOTE_STEPS.items():
        for service, operation in steps:
            if operation not in catalogue().service(service).forward_operations:
                raise UnknownServiceError(
                    f"WORKFLOW_REMOTE_STEPS[{version}]: {operation!r} is not a forward "
                    f"operation of the {service} service in services.json")


_check_steps()

WORKFLOW_VERSIONS: tuple[int, ...] = tuple(sorted(WORKFLOW_REMOTE_STEPS))
"""The registered workflow versions (X6), the one list the orchestrators (which run them) and
the scheduler (which starts new orders on one of them) both read."""

COMPENSATION_VERSIONS: tuple[int, ...] = (1, 2)
"""The registered compensation workflow versions (X6), carried in the attempt's input
(``compensationVersion``, absent: 1): version 1 acts on any reply raised on an undo's
event, version 2 only on a reply bound to the undo request it sent (A4). New compensation
attempts start on the last; earlier ones stay, so attempts already started replay."""

COMPENSATION_VERSION = COMPENSATION_VERSIONS[-1]
"""The compensation workflow version new compensation attempts start on."""

BOUND_UNDO_REPLIES_FROM = 2
"""The first compensation workflow version acting only on replies bound to their request."""

REQUEST_QUEUES = {name: spec.request_queue for name, spec in catalogue().services.items()}
"""Request queue of each agent (one agent per remote service, A1; services.json)."""

SERVICEBUS_CONNECTION = "SERVICEBUS"
"""Connection setting prefix of every Service Bus binding (identity-based:
``SERVICEBUS__fullyQualifiedNamespace``)."""
