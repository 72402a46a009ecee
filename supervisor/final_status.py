"""Final statuses the supervisor sends: for orders it ends, and those left pending (SPEC S8).

See :mod:`orders.notify` for the outbox: a final state is written with CompleteBy set and
a successful send clears it; the supervisor sends the status of the orders it gives up on
itself, and resends a pending one (:func:`supervisor.supervisor.tell_client`).
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
"""The final status a client is told for each final state (SPEC S8, S9)."""


def tell(record: StateRecord, status: StatusKind, reason: str | None,
         services: Services) -> bool:
    """Send ``record``'s final status, named after the attempt that ended the order (S8).

    Parameters
    ----------
    record : StateRecord
        In a final state; its LockedBy names the attempt that ended the order.
    status : StatusKind
        The final status.
    reason : str or None
        Why, for a failure.
    services : Services
        Stores, sender and clock.

    Returns
    -------
    bool
        True if sent (and noted); False if the send failed and the status stays pending
        (:func:`orders.notify.send_final_status`).
    """
    return send_final_status(
        services.stores.states, services.sender, record.order_id, record.status_queue,
        StatusMessage(order_id=record.submitted_order_id, status=status,
                      at=services.clock.now(), reason=reason),
        instance_id=str(record.locked_by), actor=Actor.SUPERVISOR)
