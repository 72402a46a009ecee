"""The record transitions of the compensation protocol, as pure functions (SPEC S9).

Each function returns the changed record; the caller writes it with a conditional update
(the ETag it read, and for orchestrations the LockedBy fence, SPEC S4). Keeping them here
puts the whole state machine described in :mod:`orders.compensation` in one module.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from orders.models import ProcessState, StateRecord, check_instance_id
from orders.models.state import FAILURE_REASON_MAX_LENGTH


def compensation_instance_id(order_id: str, attempt: int) -> str:
    """Return the instance id of compensation attempt ``attempt``: ``<OrderID>:comp:<n>``.

    Raises
    ------
    ValueError
        If ``attempt`` < 1 or the id breaks SPEC D2.
    """
    if attempt < 1:
        raise ValueError(f"attempt: must be at least 1, got {attempt}")
    return check_instance_id(f"{order_id}:comp:{attempt}")


def cut_reason(reason: str) -> str:
    """Shorten ``reason`` to what a record keeps (``failureReason``)."""
    if len(reason) <= FAILURE_REASON_MAX_LENGTH:
        return reason
    return reason[: FAILURE_REASON_MAX_LENGTH - 3] + "..."


def hand_over(record: StateRecord, reason: str) -> StateRecord:
    """Give a failed order to compensation: Compensating, LockedBy null (step 2).

    Parameters
    ----------
    record : StateRecord
        The record as read (Processing).
    reason : str
        Why the order failed; kept as ``failureReason``.

    Returns
    -------
    StateRecord
        Compensating, LockedBy, CompleteBy and NotBefore null: the starter starts the
        first compensation attempt on its next run.
    """
    return record.model_copy(update={
        "process_state": ProcessState.COMPENSATING, "locked_by": None, "complete_by": None,
        "not_before": None, "failure_reason": cut_reason(reason)})


def fail_without_undo(record: StateRecord, reason: str) -> StateRecord:
    """Fail an order that has nothing to undo: Error (SPEC S7)."""
    return record.model_copy(update={
        "process_state": ProcessState.ERROR, "complete_by": None,
        "failure_reason": cut_reason(reason)})


def claim(record: StateRecord, now: datetime, grace: timedelta) -> StateRecord:
    """Claim a handed-over record for the next compensation attempt (step 3, like S3).

    Returns
    -------
    StateRecord
        LockedBy = the next compensation instance id, CompleteBy = ``now + grace`` (if the
        orchestration never starts, the supervisor finds the record).
    """
    attempt = record.compensation_attempt + 1
    return record.model_copy(update={
        "locked_by": compensation_instance_id(record.order_id, attempt),
        "compensation_attempt": attempt, "not_before": None, "complete_by": now + grace})


def retry_later(record: StateRecord, failures: int, not_before: datetime) -> StateRecord:
    """Hand a stalled compensation back for a new attempt (step 5, below the limit)."""
    return record.model_copy(update={
        "locked_by": None, "compensation_failures": failures, "not_before": not_before,
        "complete_by": None})


def give_up(record: StateRecord, failures: int) -> StateRecord:
    """Stop retrying a stalled compensation: CompensationFailed (step 5, at the limit)."""
    return record.model_copy(update={
        "process_state": ProcessState.COMPENSATION_FAILED, "compensation_failures": failures,
        "complete_by": None})


def finish(record: StateRecord, state: ProcessState) -> StateRecord:
    """End a compensation attempt: Compensated or CompensationFailed (step 4).

    Raises
    ------
    ValueError
        If ``state`` is not one of the two.
    """
    if state not in (ProcessState.COMPENSATED, ProcessState.COMPENSATION_FAILED):
        raise ValueError(f"state: must be Compensated or CompensationFailed; got {state!r}")
    return record.model_copy(update={"process_state": state, "complete_by": None})
