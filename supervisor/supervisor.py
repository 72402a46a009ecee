"""One supervisor pass (V1-V5, S9, A5): bounded scans and conditional recovery.

The scans, the recovery rules and the circuit hold-back: docs/operations.md, "Supervisor".
It only requests recovery (V3); a record another supervisor changed fails the ETag check
and is skipped (V4).
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
    held_back: list[str] = field(default_factory=list)
    """Attempts an open circuit refused before any call, not counted as failures (A5, V2)."""
    overdue: list[str] = field(default_factory=list)
    skipped: int = 0
    duration_s: float = 0.0


def recover(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Recover one expired record with a conditional update (V2, S9, A5); None if skipped (V4)."""
    if refused_by_circuit(record):
        return hold_back(record, services, report)
    if record.process_state is ProcessState.COMPENSATING:
        return recover_compensation(record, services, report)
    return recover_attempt(record, services, report)


def refused_by_circuit(record: StateRecord) -> bool:
    """Tell whether this very attempt ended on an open circuit without a call (A5)."""
    return record.locked_by is not None and record.circuit_refused_by == record.locked_by


def hold_back(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Hold back an attempt an open circuit refused, without counting a failure (A5, V2)."""
    now = services.clock.now()
    holds = record.circuit_holds + 1
    until = now + circuit_hold_of(record.order_key, holds, services.settings)
    if record.process_state is ProcessState.COMPENSATING:
        changed = retry_compensation(record, record.compensation_failures, until,
                                     circuit_holds=holds)
    else:
        changed = hold_back_attempt(record, holds, until)
    if not _write(changed, services, report):
        return None
    report.held_back.append(record.order_key)
    log.info("attempt %s ended on an open circuit without a call: held back until %s "
             "(circuit hold %d), not counted as a failure", record.locked_by,
             until.isoformat(), holds)
    return "held_back"


def circuit_hold_of(order_key: str, holds: int, settings: Settings) -> timedelta:
    """Hold-back of one order's refused attempt: half to all of ``settings.circuit_hold(holds)``.

    Spread per order so refused orders do not return together; growing with ``holds``, at
    most ``CIRCUIT_HOLD_MAX_S``; deterministic, so concurrent supervisors agree.
    """
    spread = zlib.crc32(f"{order_key}:{holds}".encode()) / 0xFFFFFFFF
    return settings.circuit_hold(holds) * (0.5 + 0.5 * spread)


def recover_attempt(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Retry an expired attempt of the order, or give up on the order (V2)."""
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
        compensate = bool(pending_undos(services.stores.compensation.entries(record.order_key)))
        changed = (hand_over(counted, reason, Actor.SUPERVISOR) if compensate else
                   fail_without_undo(counted, reason, Actor.SUPERVISOR, now + s.status_grace))
    if not _write(changed, services, report):
        return None
    if failures < s.MAX_FAILURES:
        report.retried.append(record.order_key)
        return "retried"
    report.gave_up.append(record.order_key)
    send_alert(services.sender, OperatorAlert(
        kind="RetriesExhausted", order_key=record.order_key, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"RetriesExhausted:{record.locked_by}")
    if compensate:
        report.handed_over.append(record.order_key)
        return "handed_over"  # the compensation tells the client its outcome
    # The MessageId names the attempt: a resubmitted order that fails again is told again.
    tell(record, StatusKind.ORDER_FAILED, reason, services)
    return "gave_up"


def recover_compensation(record: StateRecord, services: Services,
                         report: ScanReport) -> str | None:
    """Retry an expired compensation attempt, or give up on the compensation (S9)."""
    s = services.settings
    now = services.clock.now()
    failures = record.compensation_failures + 1
    if failures < s.MAX_COMPENSATION_FAILURES:
        if _write(retry_compensation(record, failures, now + s.retry_hold(failures)), services,
                  report):
            report.compensation_retried.append(record.order_key)
            return "compensation_retried"
        return None
    if not _write(give_up_compensation(record, failures, now + s.status_grace), services,
                  report):
        return None
    report.compensation_gave_up.append(record.order_key)
    reason = (f"{record.failure_reason or 'order failed'}; compensation attempt "
              f"{record.locked_by} missed CompleteBy; {failures} compensation failures reached "
              f"MAX_COMPENSATION_FAILURES={s.MAX_COMPENSATION_FAILURES}")
    send_alert(services.sender, OperatorAlert(
        kind="CompensationFailed", order_key=record.order_key, instance_id=record.locked_by,
        reason=reason, at=now), message_id=f"CompensationFailed:{record.locked_by}")
    tell(record, StatusKind.COMPENSATION_FAILED, reason, services)
    return "compensation_gave_up"


def tell_client(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Resend a final status not sent in time, under the same MessageId (S8).

    A failed resend puts CompleteBy off by ``status_grace``; returns ``told``, ``tell_later``
    or None if skipped.
    """
    if tell(record, FINAL_STATUS[record.process_state], record.failure_reason, services):
        report.told.append(record.order_key)
        return "told"
    later = services.clock.now() + services.settings.status_grace
    if not _write(status_unsent(record, later), services, report):
        return None
    return "tell_later"


def recover_overdue(record: StateRecord, services: Services, report: ScanReport) -> str | None:
    """Recover a record whose CompleteBy passed before the scan window, with an alert (V1, V2)."""
    now = services.clock.now()
    outcome = recover(record, services, report)
    if outcome is None:
        return None
    report.overdue.append(record.order_key)
    late = _duration(now - record.complete_by) if record.complete_by else "long"
    window = services.settings.SUPERVISOR_SCAN_WINDOW_S
    reason = (f"order {record.order_key}: CompleteBy of {record.locked_by} passed "
              f"{late} ago, longer than SUPERVISOR_SCAN_WINDOW_S={window:g} s "
              f"(the supervisor did not run or fell behind); recovered: {outcome}")
    log.warning("supervisor: %s", reason)
    send_alert(services.sender, OperatorAlert(
        kind="OverdueOrder", order_key=record.order_key, instance_id=record.locked_by,
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
        # The ETag read in the scan: a record changed since is skipped.
        services.stores.states.replace(changed)
    except PreconditionFailedError:
        report.skipped += 1
        return False
    return True


def supervise(services: Services) -> ScanReport:
    """Run one bounded pass and request recovery of every expired attempt found (V1-V4)."""
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
    """Apply ``action`` to ``pages``' records up to ``budget``; return what is left."""
    for page in pages:
        report.pages += 1
        report.rows_read += page.rows_read or 0
        report.request_charge += page.request_charge or 0.0
        for record in page.records[:budget]:
            report.expired += 1
            # A step of the order's trace, beside the attempt it recovers (X8).
            with log_context(record.order_key, record.locked_by), \
                    order_span("supervisor recovery", order_key=record.order_key,
                               instance_id=record.locked_by, parent=record.trace_parent,
                               links=[record.attempt_trace]) as span:
                span.set_attribute(OPERATION, action(record, services, report) or "skipped")
        budget -= len(page.records)
        if budget <= 0:
            break
    return budget
