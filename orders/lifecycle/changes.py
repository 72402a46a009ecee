"""Named changes of a state record, each one transition, for a conditional write (S3, S4, V2)."""

from __future__ import annotations

from datetime import datetime

from orders.lifecycle.ids import attempt_instance_id, compensation_instance_id
from orders.lifecycle.transitions import Actor, apply
from orders.models import ProcessState, StateRecord
from orders.models.state import FAILURE_REASON_MAX_LENGTH


def cut_reason(reason: str) -> str:
    """Shorten ``reason`` to what ``failureReason`` keeps."""
    if len(reason) <= FAILURE_REASON_MAX_LENGTH:
        return reason
    return reason[: FAILURE_REASON_MAX_LENGTH - 3] + "..."


def claim_attempt(record: StateRecord, complete_by: datetime, version: int) -> StateRecord:
    """Claim a Pending record for its next attempt (S3); ``version`` is for a first one (X6)."""
    attempt = record.attempt + 1
    return apply("claim_attempt", record, Actor.STARTER,
                 locked_by=attempt_instance_id(record.order_key, attempt), attempt=attempt,
                 not_before=None, complete_by=complete_by,
                 workflow_version=record.workflow_version if record.attempt else version)


def set_deadline(record: StateRecord, complete_by: datetime, actor: Actor) -> StateRecord:
    """Set CompleteBy of the running attempt or compensation attempt (S5, S9)."""
    name = "begin_attempt" if actor is Actor.ORDER_WORKFLOW else "begin_compensation"
    return apply(name, record, actor, complete_by=complete_by)


def complete(record: StateRecord, tell_by: datetime) -> StateRecord:
    """End the order: Processed; CompleteBy = ``tell_by`` until :func:`status_sent` (S6, S8)."""
    return apply("complete", record, Actor.ORDER_WORKFLOW, complete_by=tell_by)


def mark_circuit_refusal(record: StateRecord, instance_id: str) -> StateRecord:
    """Note that an open circuit refused the attempt before any call (A5, V2)."""
    return apply("mark_circuit_refusal", record, Actor.REPLY_HANDLER,
                 circuit_refused_by=instance_id)


def retry_attempt(record: StateRecord, failures: int, until: datetime) -> StateRecord:
    """Return an expired attempt's record to Pending, held back until ``until`` (V2)."""
    return apply("retry_attempt", record, Actor.SUPERVISOR, locked_by=None,
                 failure_count=failures, not_before=until, complete_by=until)


def hold_back_attempt(record: StateRecord, holds: int, until: datetime) -> StateRecord:
    """Return an attempt an open circuit refused to Pending without a failure (A5, V2)."""
    return apply("hold_back_attempt", record, Actor.SUPERVISOR, locked_by=None,
                 not_before=until, complete_by=until, circuit_holds=holds)


def hand_over(record: StateRecord, reason: str, actor: Actor) -> StateRecord:
    """Give a failed order to compensation: Compensating, LockedBy null (S9)."""
    return apply("hand_over", record, actor, locked_by=None, complete_by=None,
                 not_before=None, failure_reason=cut_reason(reason))


def fail_without_undo(record: StateRecord, reason: str, actor: Actor,
                      tell_by: datetime) -> StateRecord:
    """Fail an order that has nothing to undo: Error, the client to be told (S7, S8)."""
    return apply("fail_without_undo", record, actor, complete_by=tell_by,
                 failure_reason=cut_reason(reason))


def claim_compensation(record: StateRecord, complete_by: datetime) -> StateRecord:
    """Claim a handed-over record for the next compensation attempt (S9)."""
    attempt = record.compensation_attempt + 1
    return apply("claim_compensation", record, Actor.STARTER,
                 locked_by=compensation_instance_id(record.order_key, attempt),
                 compensation_attempt=attempt, not_before=None, complete_by=complete_by)


def finish_compensation(record: StateRecord, state: ProcessState,
                        tell_by: datetime) -> StateRecord:
    """End a compensation in ``state``: Compensated or CompensationFailed, else ValueError (S9)."""
    names = {ProcessState.COMPENSATED: "compensated",
             ProcessState.COMPENSATION_FAILED: "compensation_failed"}
    if state not in names:
        raise ValueError(f"state: must be Compensated or CompensationFailed; got {state!r}")
    return apply(names[state], record, Actor.COMPENSATION_WORKFLOW, complete_by=tell_by)


def retry_compensation(record: StateRecord, failures: int, not_before: datetime,
                       **changes: object) -> StateRecord:
    """Hand a stalled compensation back for a new attempt (S9, below the limit)."""
    return apply("retry_compensation", record, Actor.SUPERVISOR, locked_by=None,
                 compensation_failures=failures, not_before=not_before, complete_by=None,
                 **changes)


def give_up_compensation(record: StateRecord, failures: int,
                         tell_by: datetime) -> StateRecord:
    """Stop retrying a stalled compensation: CompensationFailed (S9, at the limit)."""
    return apply("give_up_compensation", record, Actor.SUPERVISOR,
                 compensation_failures=failures, complete_by=tell_by)


def status_sent(record: StateRecord, actor: Actor) -> StateRecord:
    """Note that the client was sent the final status: CompleteBy null (S8)."""
    return apply("status_sent", record, actor, complete_by=None)


def status_unsent(record: StateRecord, retry_at: datetime) -> StateRecord:
    """Put off the supervisor's next resend of a final status whose send failed (S8)."""
    return apply("status_unsent", record, Actor.SUPERVISOR, complete_by=retry_at)


def resubmit(record: StateRecord) -> StateRecord:
    """Resubmit an order in Error for a new attempt: Pending, FailureCount 0 (S7)."""
    return apply("resubmit", record, Actor.OPERATOR, locked_by=None, failure_count=0,
                 not_before=None, complete_by=None)
