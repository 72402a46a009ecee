"""Final statuses the supervisor sends: for orders it ends, and those left pending (S8).

The outbox rule: :mod:`orders.notify`.
"""

from __future__ import annotations

from orders.lifecycle.transitions import Actor
from orders.models import ProcessState, StateRecord
from orders.models.messages import StatusKind, StatusMessage
from orders.notify import send_final_status
from orders.runtime import Services

FINAL_STATUS: dict[ProcessState, StatusKind] = {
    ProcessState.PROCESSED: StatusKind.ORDER_COMPLETED,
    ProcessState.ERROR: StatusKind.ORDER_FAILED,
    ProcessState.COMPENSATED: StatusKind.COMPENSATED,
    ProcessState.COMPENSATION_FAILED: StatusKind.COMPENSATION_FAILED,
}


def tell(record: StateRecord, status: StatusKind, reason: str | None,
         services: Services) -> bool:
    """Send ``record``'s final status under the ending attempt's id (S8); False if still pending."""
    return send_final_status(
        services.stores.states, services.sender, record.order_key, record.status_queue,
        StatusMessage(order_id=record.submitted_order_id, status=status,
                      at=services.clock.now(), reason=reason),
        instance_id=str(record.locked_by), actor=Actor.SUPERVISOR)
