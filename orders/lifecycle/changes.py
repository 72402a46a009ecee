"""The named changes of a state record: each one transition of the table, with its fields.

Scheduler, supervisor, activities and operator tools call these instead of writing
``processState`` themselves; each goes through :func:`~orders.lifecycle.transitions.apply`
and returns the changed record for the caller's conditional write (SPEC S3, S4, V2).
"""

from __future__ import annotations

from datetime import datetime

from orders.lifecycle.ids import attempt_instance_id, compensation_instance_id
from orders.lifecycle.transitions import Actor, apply
from orders.models import ProcessState, StateRecord
from orders.models.state import FAILURE_REASON_MAX_LENGTH


def cut_reason(reason: str) -> str:
    """Shorten ``reason`` to what a record keeps (``failureReason``)."""
    if len(reason) <= FAILURE_REASON_MAX_LENGTH:
        return reason
    return reason[: FAILURE_REASON_MAX_LENGTH - 3] + "..."


def claim_attempt(record: StateRecord, complete_by: datetime, version: int) -> StateRecord:
    """Claim a Pending record for its next attempt (SPEC S3).

    Parameters
    ----------
    record : StateRecord
        Pending, LockedBy null.
    complete_by : datetime
        First CompleteBy: if the orchestration never starts, the supervisor finds it.
    version : int
        The workflow version for a first attempt; later attempts keep the record's (X6).

    Returns
    -------
    StateRecord
        Processing, LockedBy = the next attempt's instance id.
    """
    attempt = record.attempt + 1
    return apply("claim_attempt", record, Actor.STARTER,
                 locked_by=attempt_instance_id(record.order_id, attempt), attempt=attempt,
                 not_before=None, complete_by=complete_by,
                 workflow_version=record.workflow_version if record.attempt else version)


def set_deadline(record: StateRecord, complete_by: datetime, actor: Actor) -> StateRecord:
    """Set CompleteBy of the running attempt or compensation attempt (SPEC S5, S9)."""
    name = "begin_attempt" if actor is Actor.ORDER_WORKFLOW else "begin_compensation"
    return apply(name, record, actor, complete_by=complete_by)


def complete(record: StateRecord, tell_by: datetime) -> StateRecord:
    """End the order: Processed, the client to be told by ``tell_by`` (SPEC S6, S8).

    Every final state is written with CompleteBy = ``tell_by``, the deadline of telling the
    client, and :func:`status_sent` clears it: a final status whose send failed is still
    pending in the record, and the supervisor resends it once ``tell_by`` has passed.
    """
    return apply("complete", record, Actor.ORDER_WORKFLOW, complete_by=tell_by)


def mark_circuit_refusal(record: StateRecord, instance_id: str) -> StateRecord:
    """Note that an open circuit refused the attempt before any call (SPEC A5, V2)."""
    return apply("mark_circuit_refusal", record, Actor.REPLY_HANDLER,
                 circuit_refused_by=instance_id)


def retry_attempt(record: StateRecord, failures: int, until: datetime) -> StateRecord:
    """Return an expired attempt's record to Pending, held back until ``until`` (SPEC V2)."""
    return apply("retry_attempt", record, Actor.SUPERVISOR, locked_by=None,
                 failure_count=failures, not_before=until, complete_by=until)


def hold_back_attempt(record: StateRecord, holds: int, until: datetime) -> StateRecord:
    """Return an attempt an open circuit refused to Pending without a failure (A5, V2)."""
    return apply("hold_back_attempt", record, Actor.SUPERVISOR, locked_by=None,
                 not_before=until, complete_by=until, circuit_holds=holds)


def hand_over(record: StateRecord, reason: str, actor: Actor) -> StateRecord:
    """Give a failed order to compensation: Compensating, LockedBy null (SPEC S9).

    The starter starts the first compensation attempt on its next run.
    """
    return apply("hand_over", record, actor, locked_by=None, complete_by=None,
                 not_before=None, failure_reason=cut_reason(reason))


def fail_without_undo(record: StateRecord, reason: str, actor: Actor,
                      tell_by: datetime) -> StateRecord:
    """Fail an order that has nothing to undo: Error, the client to be told (SPEC S7, S8)."""
    return apply("fail_without_undo", record, actor, complete_by=tell_by,
                 failure_reason=cut_reason(reason))


def claim_compensation(record: StateRecord, complete_by: datetime) -> StateRecord:
    """Claim a handed-over record for the next compensation attempt (SPEC S9, like S3).

    Returns
    -------
    StateRecord
        LockedBy = the next compensation instance id, CompleteBy = ``complete_by``.
    """
    attempt = record.compensation_attempt + 1
    return apply("claim_compensation", record, Actor.STARTER,
                 locked_by=compensation_instance_id(record.order_id, attempt),
                 compensation_attempt=attempt, not_before=None, complete_by=complete_by)


def finish_compensation(record: StateRecord, state: ProcessState,
                        tell_by: datetime) -> StateRecord:
    """End a compensation attempt: Compensated or CompensationFailed (SPEC S9, S8).

    The client is to be told by ``tell_by`` (see :func:`complete`).

    Raises
    ------
    ValueError
        If ``state`` is not one of the two.
    """
    names = {ProcessState.COMPENSATED: "compensated",
             ProcessState.COMPENSATION_FAILED: "compensation_failed"}
    if state not in names:
        raise ValueError(f"state: must be Compensated or CompensationFailed; got {state!r}")
    return apply(names[state], record, Actor.COMPENSATION_WORKFLOW, complete_by=tell_by)


def retry_compensation(record: StateRecord, failures: int, not_before: datetime,
                       **changes: object) -> StateRecord:
    """Hand a stalled compensation back for a new attempt (SPEC S9, below the limit)."""
    return apply("retry_compensation", record, Actor.SUPERVISOR, locked_by=None,
                 compensation_failures=failures, not_before=not_before, complete_by=None,
                 **changes)


def give_up_compensation(record: StateRecord, failures: int,
                         tell_by: datetime) -> StateRecord:
    """Stop retrying a stalled compensation: CompensationFailed (SPEC S9, at the limit).

    The client is to be told by ``tell_by`` (see :func:`complete`).
    """
    return apply("give_up_compensation", record, Actor.SUPERVISOR,
                 compensation_failures=failures, complete_by=tell_by)


def status_sent(record: StateRecord, actor: Actor) -> StateRecord:
    """Note that the client was sent the order's final status: CompleteBy null (SPEC S8)."""
    return apply("status_sent", record, actor, complete_by=None)


def status_unsent(record: StateRecord, retry_at: datetime) -> StateRecord:
    """Put off the supervisor's next resend of a final status whose send failed (S8)."""
    return apply("status_unsent", record, Actor.SUPERVISOR, complete_by=retry_at)


def resubmit(record: StateRecord) -> StateRecord:
    """Resubmit an order in Error for a new attempt: Pending, FailureCount 0 (SPEC S7)."""
    return apply("resubmit", record, Actor.OPERATOR, locked_by=None, failure_count=0,
                 not_before=None, complete_by=None)
