"""One supervisor pass (SPEC V1-V5, S9).

The supervisor scans the state store for records in Processing or Compensating whose
CompleteBy has expired, bounded by a CompleteBy window, a maximum record count and
continuation-token paging (V1). For each it makes a conditional update that checks the
stale LockedBy and the ETag before counting the failure (V2, V4).

An expired attempt of the order (Processing) increments FailureCount:

- below ``MAX_FAILURES``: Pending, LockedBy null, a not-before that doubles with each failure
  (a record that keeps failing is held back longer) and a new CompleteBy at that time; the
  starter then schedules the next attempt;
- at ``MAX_FAILURES``: the order failed. With completed steps in its compensation log it is
  handed over to compensation (Compensating, LockedBy null: the starter starts the
  compensation, see :mod:`orders.compensation`); with nothing to undo it is set to Error and
  the client gets "OrderFailed". Either way a RetriesExhausted alert goes to operators.

An expired compensation attempt (Compensating, LockedBy set: e.g. the host died while
compensating, or the refund timed out) increments ``compensationFailures``, a budget of its
own: below ``MAX_COMPENSATION_FAILURES`` LockedBy null and a hold-back, so the starter
starts the next compensation attempt; at the limit CompensationFailed, a CompensationFailed
alert and "CompensationFailed" to the client.

It only requests recovery (V3): it starts nothing itself. Several supervisors may run at
once: a record changed by another one fails the ETag check and is skipped (V4).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from orders.compensation.plan import pending_undos
from orders.compensation.protocol import fail_without_undo, give_up, hand_over, retry_later
from orders.models import SUPERVISED_STATES, ProcessState, StateRecord
from orders.models.messages import OperatorAlert, StatusKind, StatusMessage
from orders.ops import metrics
from orders.ops.logs import log_context
from orders.runtime import Services
from orders.scheduler.notify import send_alert, send_status
from orders.stores.errors import PreconditionFailedError
from orders.stores.ports import iter_expired_pages

log = logging.getLogger("orders.supervisor")


@dataclass
class ScanReport:
    """What one supervisor pass read and did (its cost is observable, V1)."""

    pages: int = 0
    rows_read: int = 0
    request_charge: float = 0.0
    expired: int = 0
    retried: list[str] = field(default_factory=list)
    gave_up: list[str] = field(default_factory=list)
    handed_over: list[str] = field(default_factory=list)
    """Of ``gave_up``: the orders handed over to compensation."""
    compensation_retried: list[str] = field(default_factory=list)
    compensation_gave_up: list[str] = field(default_factory=list)
    skipped: int = 0
    duration_s: float = 0.0


def recover(record: StateRecord, services: Services, report: ScanReport) -> None:
    """Request recovery of one expired record with a conditional update (SPEC V2, S9)."""
    if record.process_state is ProcessState.COMPENSATING:
        recover_compensation(record, services, report)
    else:
        recover_attempt(record, services, report)


def recover_attempt(record: StateRecord, services: Services, report: ScanReport) -> None:
    """Retry an expired attempt of the order, or give up on the order (SPEC V2)."""
    s = services.settings
    now = services.clock.now()
    failures = record.failure_count + 1
    reason = (f"attempt {record.locked_by} missed CompleteBy; {failures} failures reached "
              f"MAX_FAILURES={s.MAX_FAILURES}")
    compensate = False
    if failures < s.MAX_FAILURES:
        hold = s.retry_hold(failures)
        changed = record.model_copy(update={
            "process_state": ProcessState.PENDING, "locked_by": None,
            "failure_count": failures, "not_before": now + hold, "complete_by": now + hold})
    else:
        counted = record.model_copy(update={"failure_count": failures})
        compensate = bool(pending_undos(services.stores.compensation.entries(record.order_id)))
        changed = hand_over(counted, reason) if compensate else fail_without_undo(counted, reason)
    if not _write(changed, services, report):
        return
    if failures < s.MAX_FAILURES:
        report.retried.append(record.order_id)
        return
    report.gave_up.append(record.order_id)
    send_alert(services.sender, OperatorAlert(
        kind="RetriesExhausted", order_id=record.order_id, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"RetriesExhausted:{record.locked_by}")
    if compensate:
        report.handed_over.append(record.order_id)
        return  # the compensation tells the client its outcome
    send_status(services.sender, record.reply_to, StatusMessage(
        order_id=record.order_id, status=StatusKind.ORDER_FAILED, at=now, reason=reason))


def recover_compensation(record: StateRecord, services: Services, report: ScanReport) -> None:
    """Retry an expired compensation attempt, or give up on the compensation (SPEC S9)."""
    s = services.settings
    now = services.clock.now()
    failures = record.compensation_failures + 1
    if failures < s.MAX_COMPENSATION_FAILURES:
        if _write(retry_later(record, failures, now + s.retry_hold(failures)), services, report):
            report.compensation_retried.append(record.order_id)
        return
    if not _write(give_up(record, failures), services, report):
        return
    report.compensation_gave_up.append(record.order_id)
    reason = (f"{record.failure_reason or 'order failed'}; compensation attempt "
              f"{record.locked_by} missed CompleteBy; {failures} compensation failures reached "
              f"MAX_COMPENSATION_FAILURES={s.MAX_COMPENSATION_FAILURES}")
    send_alert(services.sender, OperatorAlert(
        kind="CompensationFailed", order_id=record.order_id, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"CompensationFailed:{record.locked_by}")
    send_status(services.sender, record.reply_to, StatusMessage(
        order_id=record.order_id, status=StatusKind.COMPENSATION_FAILED, at=now, reason=reason))


def _write(changed: StateRecord, services: Services, report: ScanReport) -> bool:
    try:
        # replace() checks the ETag read in the scan, so LockedBy is still the stale
        # instance's: a record another supervisor or the attempt itself changed is skipped.
        services.stores.states.replace(changed)
    except PreconditionFailedError:
        report.skipped += 1
        return False
    return True


def supervise(services: Services) -> ScanReport:
    """Run one bounded scan and request recovery of every expired attempt found.

    Returns
    -------
    ScanReport
        Pages, rows read / request charge, and the OrderIDs retried or given up.
    """
    s = services.settings
    started = time.perf_counter()
    report = ScanReport()
    now = services.clock.now()
    budget = s.SUPERVISOR_MAX_RECORDS
    for page in iter_expired_pages(services.stores.states, now, s.scan_window,
                                   s.SUPERVISOR_PAGE_SIZE,
                                   states=SUPERVISED_STATES):
        report.pages += 1
        report.rows_read += page.rows_read or 0
        report.request_charge += page.request_charge or 0.0
        for record in page.records[:budget]:
            report.expired += 1
            with log_context(record.order_id, record.locked_by):
                recover(record, services, report)
        budget -= len(page.records)
        if budget <= 0:
            break
    report.duration_s = time.perf_counter() - started
    metrics.record_scan(report.rows_read, report.duration_s, report.request_charge or None)
    metrics.record_recovery("retried", len(report.retried) + len(report.compensation_retried))
    metrics.record_recovery("gave_up", len(report.gave_up) + len(report.compensation_gave_up))
    metrics.record_recovery("skipped", report.skipped)
    if report.expired or report.skipped:
        log.info("supervisor: pages=%d rows_read=%d ru=%.1f expired=%d retried=%d gave_up=%d "
                 "(handed_over=%d) compensation_retried=%d compensation_gave_up=%d skipped=%d "
                 "in %.3fs", report.pages, report.rows_read, report.request_charge,
                 report.expired, len(report.retried), len(report.gave_up),
                 len(report.handed_over), len(report.compensation_retried),
                 len(report.compensation_gave_up), report.skipped, report.duration_s)
    return report
