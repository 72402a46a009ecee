"""Records and log entries in chosen states, for the compensation unit tests."""

from datetime import timedelta

from orders.models import CompensationEntry, ProcessState, StateRecord

RESERVE = {"step": "reserve_inventory", "reservationId": "RES-ORD-1",
           "lines": [{"sku": "SKU-A", "quantity": 2}]}
CHARGE = {"step": "charge", "paymentId": "pay_1", "amount": "20.00", "currency": "USD"}
SHIP = {"step": "ship", "shipmentId": "shp_1"}


def entry(details, now, order_key="ORD-1", seq=None, instance_id="ORD-1:1"):
    made = CompensationEntry.new(order_key, details, instance_id=instance_id,
                                 workflow_version=1, now=now)
    return made.model_copy(update={"seq": seq}) if seq else made


def record_in(states, clock, state=ProcessState.PROCESSING, order_key="ORD-1", **changes):
    """Create a record and move it to ``state`` (owned by attempt 1 where it needs an owner)."""
    now = clock.now()
    record = states.create_if_absent(StateRecord.new(order_key, "replies-acme", now)).record
    if state is ProcessState.PENDING:
        return record
    update = {"process_state": state, "attempt": 1, "locked_by": f"{order_key}:1",
              "complete_by": now + timedelta(seconds=30), **changes}
    return states.replace(record.model_copy(update=update))
