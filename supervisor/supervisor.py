"""One supervisor pass (SPEC V1-V5, S9, A5).

The supervisor scans the state store for records in Processing or Compensating whose
CompleteBy has expired, bounded by a CompleteBy window, a maximum record count and
continuation-token paging (V1). For each it makes a conditional update that checks the
stale LockedBy and the ETag before counting the failure (V2, V4).

No order is forgotten: the same pass first scans for *overdue* records, whose CompleteBy
lies before the window (the supervisor did not run for that long, or fell behind). They
are recovered by the same rules as any expired record, and each one recovered raises an
``OverdueOrder`` alert naming the order and how long its CompleteBy had passed. Both
scans read one index range per state, so their cost grows with the expired records only,
and they share ``SUPERVISOR_MAX_RECORDS``. The overdue scan goes first: a record the
window scan has no room for in this pass becomes overdue later and is still found.

An attempt that ended on an open circuit breaker without any call to the service (the
reply handler marked ``circuitRefusedBy`` = its LockedBy, see
:mod:`scheduler.replies`) is not the order's fault: another order may have opened
the circuit. It is held back instead of counted: ``circuitHolds`` + 1, FailureCount (or
``compensationFailures``) unchanged, LockedBy null and a not-before of
``CIRCUIT_COOL_DOWN_S * 2**(circuitHolds-1)``, at most ``CIRCUIT_HOLD_MAX_S`` (A5, V2),
spread over its upper half per order (:func:`circuit_hold_of`): the orders one open circuit
refused together would otherwise all come back at the same moment and meet the circuit
together again. Such an attempt made no remote call, so it costs nothing of the retry
budget (X2).

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

A record in a final state (Processed, Error, Compensated, CompensationFailed) whose
CompleteBy has passed is an order whose client was not told its final status: the send
failed, or the step crashed before it (the final state is written with CompleteBy set and
the send clears it, :mod:`orders.notify`). The same pass scans those too, after the others
and within the same record budget, and resends the status (:func:`tell_client`, SPEC S8).

It only requests recovery (V3): it starts nothing itself. Several supervisors may run at
once: a record changed by another one fails the ETag check and is skipped (V4).
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from orders.compensation.plan import pending_undos
from orders.lifecycle.changes import (
    fail_without_undo,
    give_up_compensation,
    hand_over,
    hold_back_attempt,
    retry_attempt,
    retry_compensation,
    status_unsent,
)
from orders.lifecycle.transitions import Actor
from orders.models import FINAL_STATES, SUPERVISED_STATES, ProcessState, StateRecord
from orders.models.messages import OperatorAlert, StatusKind
from orders.notify import send_alert
from orders.observability import metrics
from orders.observability.logs import log_context
from orders.observability.tracing import OPERATION, order_span
from orders.runtime import Services
from orders.settings import Settings
from orders.stores.errors import PreconditionFailedError
from orders.stores.paging import iter_expired_pages
from orders.stores.ports import ScanPage
from supervisor.final_status import FINAL_STATUS, tell

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
    told: list[str] = field(default_factory=list)
    """Orders in a final state whose final status was resent (its first send had failed,
    SPEC S8)."""
    held_back: list[str] = field(default_factory=list)
    """Attempts (or compensation attempts) an open circuit refused before any call: held
    back without counting a failure (SPEC A5, V2)."""
    overdue: list[str] = field(default_factory=list)
    """Records found with CompleteBy before the scan window and recovered (one
    ``OverdueOrder`` alert each)."""
    skipped: int = 0
    duration_s: float = 0.0


def recover(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Request recovery of one expired record with a conditional update (SPEC V2, S9, A5).

    Returns
    -------
    str or None
        What was done: ``retried``, ``held_back``, ``gave_up``, ``handed_over``,
        ``compensation_retried`` or ``compensation_gave_up``; None if another writer
        changed the record first (skipped, V4).
    """
    if refused_by_circuit(record):
        return hold_back(record, services, report)
    if record.process_state is ProcessState.COMPENSATING:
        return recover_compensation(record, services, report)
    return recover_attempt(record, services, report)


def refused_by_circuit(record: StateRecord) -> bool:
    """Tell whether the expired attempt ended on an open circuit without a call (SPEC A5).

    True when ``circuitRefusedBy`` names the instance that still holds the record, i.e.
    the reply handler marked this very attempt (a mark of an earlier attempt never
    matches, since every attempt has its own instance id).
    """
    return record.locked_by is not None and record.circuit_refused_by == record.locked_by


def hold_back(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Hold back an attempt an open circuit refused, without counting a failure (A5, V2).

    ``circuitHolds`` + 1; FailureCount and ``compensationFailures`` stay as they are. An
    order attempt goes back to Pending, a compensation attempt stays Compensating; either
    way LockedBy is null and the starter ignores the record until
    ``now + circuit_hold_of(OrderID, circuitHolds)``.

    Returns
    -------
    str or None
        ``held_back``, or None if another writer changed the record first.
    """
    now = services.clock.now()
    holds = record.circuit_holds + 1
    until = now + circuit_hold_of(record.order_id, holds, services.settings)
    if record.process_state is ProcessState.COMPENSATING:
        changed = retry_compensation(record, record.compensation_failures, until,
                                     circuit_holds=holds)
    else:
        changed = hold_back_attempt(record, holds, until)
    if not _write(changed, services, report):
        return None
    report.held_back.append(record.order_id)
    log.info("attempt %s ended on an open circuit without a call: held back until %s "
             "(circuit hold %d), not counted as a failure", record.locked_by,
             until.isoformat(), holds)
    return "held_back"


def circuit_hold_of(order_id: str, holds: int, settings: Settings) -> timedelta:
    """Hold-back of one order's attempt refused by an open circuit (SPEC A5, V2).

    Parameters
    ----------
    order_id : str
        The order; it picks the order's place in the spread.
    holds : int
        ``circuitHolds`` after the increment, at least 1.
    settings : Settings
        For :meth:`Settings.circuit_hold`.

    Returns
    -------
    timedelta
        Between half and all of ``settings.circuit_hold(holds)``: never more than
        ``CIRCUIT_HOLD_MAX_S``, and growing with ``holds`` (the least hold-back after
        ``n + 1`` refusals is the most after ``n``, below the cap). Deterministic, so
        concurrent supervisors compute the same value.
    """
    spread = zlib.crc32(f"{order_id}:{holds}".encode()) / 0xFFFFFFFF
    return settings.circuit_hold(holds) * (0.5 + 0.5 * spread)


def recover_attempt(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Retry an expired attempt of the order, or give up on the order (SPEC V2)."""
    s = services.settings
    now = services.clock.now()
    failures = record.failure_count + 1
    reason = (f"attempt {record.locked_by} missed CompleteBy; {failures} failures reached "
              f"MAX_FAILURES={s.MAX_FAILURES}")
    compensate = False
    if failures < s.MAX_FAILURES:
        hold = s.retry_hold(failures)
        changed = retry_attempt(record, failures, now + hold)
    else:
        counted = record.model_copy(update={"failure_count": failures})
        compensate = bool(pending_undos(services.stores.compensation.entries(record.order_id)))
        changed = (hand_over(counted, reason, Actor.SUPERVISOR) if compensate else
                   fail_without_undo(counted, reason, Actor.SUPERVISOR, now + s.status_grace))
    if not _write(changed, services, report):
        return None
    if failures < s.MAX_FAILURES:
        report.retried.append(record.order_id)
        return "retried"
    report.gave_up.append(record.order_id)
    send_alert(services.sender, OperatorAlert(
        kind="RetriesExhausted", order_id=record.order_id, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"RetriesExhausted:{record.locked_by}")
    if compensate:
        report.handed_over.append(record.order_id)
        return "handed_over"  # the compensation tells the client its outcome
    # The MessageId names the attempt: a resubmitted order that fails again is told again.
    tell(record, StatusKind.ORDER_FAILED, reason, services)
    return "gave_up"


def recover_compensation(record: StateRecord, services: Services,
                         report: ScanReport) -> str | None:
    """Retry an expired compensation attempt, or give up on the compensation (SPEC S9)."""
    s = services.settings
    now = services.clock.now()
    failures = record.compensation_failures + 1
    if failures < s.MAX_COMPENSATION_FAILURES:
        if _write(retry_compensation(record, failures, now + s.retry_hold(failures)), services,
                  report):
            report.compensation_retried.append(record.order_id)
            return "compensation_retried"
        return None
    if not _write(give_up_compensation(record, failures, now + s.status_grace), services,
                  report):
        return None
    report.compensation_gave_up.append(record.order_id)
    reason = (f"{record.failure_reason or 'order failed'}; compensation attempt "
              f"{record.locked_by} missed CompleteBy; {failures} compensation failures reached "
              f"MAX_COMPENSATION_FAILURES={s.MAX_COMPENSATION_FAILURES}")
    send_alert(services.sender, OperatorAlert(
        kind="CompensationFailed", order_id=record.order_id, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"CompensationFailed:{record.locked_by}")
    tell(record, StatusKind.COMPENSATION_FAILED, reason, services)
    return "compensation_gave_up"


def tell_client(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Resend the final status of an order whose client was not told in time (SPEC S8).

    ``record`` is in a final state with its CompleteBy passed: the step that ended the order
    could not send its status (or crashed before it). The status is sent again under the
    same MessageId (so a send that did reach the queue within its duplicate-detection
    window is dropped there) with the record's ``failureReason``, and the record noted. If
    the send fails again, CompleteBy is put off by ``status_grace`` for the next pass.

    Returns
    -------
    str or None
        ``told`` or ``tell_later``; None if another writer changed the record first.
    """
    if tell(record, FINAL_STATUS[record.process_state], record.failure_reason, services):
        report.told.append(record.order_id)
        return "told"
    later = services.clock.now() + services.settings.status_grace
    if not _write(status_unsent(record, later), services, report):
        return None
    return "tell_later"


def recover_overdue(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Recover a record whose CompleteBy passed before the scan window, and alert (V1, V2).

    The record is recovered by :func:`recover`, like any expired one; if this supervisor
    made the change, an ``OverdueOrder`` alert names the order, its attempt, how long ago
    its CompleteBy passed and what was done. A record another writer changed first is
    skipped without an alert (the writer that won handles it, V4).

    Returns
    -------
    str or None
        As :func:`recover`.
    """
    now = services.clock.now()
    outcome = recover(record, services, report)
    if outcome is None:
        return None
    report.overdue.append(record.order_id)
    late = _duration(now - record.complete_by) if record.complete_by else "long"
    window = services.settings.SUPERVISOR_SCAN_WINDOW_S
    reason = (f"order {record.order_id}: CompleteBy of {record.locked_by} passed "
              f"{late} ago, longer than SUPERVISOR_SCAN_WINDOW_S={window:g} s "
              f"(the supervisor did not run or fell behind); recovered: {outcome}")
    log.warning("supervisor: %s", reason)
    send_alert(services.sender, OperatorAlert(
        kind="OverdueOrder", order_id=record.order_id, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"OverdueOrder:{record.locked_by}")
    return outcome


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    return (f"{days}d " if days else "") + f"{hours:02d}:{minutes:02d}:{seconds:02d}"


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
    """Run one bounded pass and request recovery of every expired attempt found (V1-V4).

    The scans share ``SUPERVISOR_MAX_RECORDS``: first the overdue records (CompleteBy
    before ``now - SUPERVISOR_SCAN_WINDOW_S``, each recovered with an ``OverdueOrder``
    alert), then those expired within the window; then the same two ranges of the final
    states, whose pending final status is resent (:func:`tell_client`). All follow
    continuation tokens page by page (``SUPERVISOR_PAGE_SIZE``) and read only expired
    records.

    Returns
    -------
    ScanReport
        Pages, rows read / request charge of both scans, and the OrderIDs retried, held
        back, given up or found overdue.
    """
    s = services.settings
    started = time.perf_counter()
    report = ScanReport()
    now = services.clock.now()
    budget = s.SUPERVISOR_MAX_RECORDS
    sweeps = ((SUPERVISED_STATES, True, recover_overdue), (SUPERVISED_STATES, False, recover),
              (FINAL_STATES, True, tell_client), (FINAL_STATES, False, tell_client))
    for states, overdue, action in sweeps:
        budget = _sweep(iter_expired_pages(services.stores.states, now, s.scan_window,
                                           s.SUPERVISOR_PAGE_SIZE, states=states,
                                           overdue=overdue),
                        action, budget, services, report)
        if budget <= 0:
            break
    report.duration_s = time.perf_counter() - started
    metrics.record_scan(report.rows_read, report.duration_s, report.request_charge or None)
    metrics.record_recovery("retried", len(report.retried) + len(report.compensation_retried))
    metrics.record_recovery("held_back", len(report.held_back))
    metrics.record_recovery("gave_up", len(report.gave_up) + len(report.compensation_gave_up))
    metrics.record_recovery("overdue", len(report.overdue))
    metrics.record_recovery("told", len(report.told))
    metrics.record_recovery("skipped", report.skipped)
    if report.expired or report.skipped:
        log.info("supervisor: pages=%d rows_read=%d ru=%.1f expired=%d overdue=%d retried=%d "
                 "held_back=%d gave_up=%d (handed_over=%d) compensation_retried=%d "
                 "compensation_gave_up=%d told=%d skipped=%d in %.3fs", report.pages,
                 report.rows_read, report.request_charge, report.expired,
                 len(report.overdue), len(report.retried), len(report.held_back),
                 len(report.gave_up), len(report.handed_over),
                 len(report.compensation_retried), len(report.compensation_gave_up),
                 len(report.told), report.skipped, report.duration_s)
    return report


def _sweep(pages: Iterator[ScanPage],
           action: Callable[[StateRecord, Services, ScanReport], str | None],
           budget: int, services: Services, report: ScanReport) -> int:
    """Apply ``action`` to the records of ``pages`` until ``budget`` records; return the rest."""
    for page in pages:
        report.pages += 1
        report.rows_read += page.rows_read or 0
        report.request_charge += page.request_charge or 0.0
        for record in page.records[:budget]:
            report.expired += 1
            # A step of the order's trace, beside the attempt it recovers (X8).
            with log_context(record.order_id, record.locked_by), \
                    order_span("supervisor recovery", order_key=record.order_id,
                               instance_id=record.locked_by, parent=record.trace_parent,
                               links=[record.attempt_trace]) as span:
                span.set_attribute(OPERATION, action(record, services, report) or "skipped")
        budget -= len(page.records)
        if budget <= 0:
            break
    return budget
