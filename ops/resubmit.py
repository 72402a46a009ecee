"""Operator resubmission of an order in Error: start attempt n+1, at most once (S7, S3).

See docs/operations.md, "Resubmitting an order in Error".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from orders.lifecycle.changes import resubmit as resubmit_change
from orders.models import ProcessState, StateRecord
from orders.observability.logs import order_logger
from orders.observability.metrics import record_resubmission
from orders.stores import StateStore
from orders.stores.errors import PreconditionFailedError

log = logging.getLogger("orders.ops.resubmit")

RESUBMITTABLE = ProcessState.ERROR

MAX_ETAG_TRIES = 3
"""Re-reads after losing an ETag race before giving up."""


class ResubmitOutcome(StrEnum):
    """What :func:`resubmit` did."""

    RESUBMITTED = "resubmitted"
    NOT_IN_ERROR = "not_in_error"
    NOT_FOUND = "not_found"


@dataclass(frozen=True)
class ResubmitResult:
    """Outcome of one resubmission; ``next_attempt`` is set for RESUBMITTED only."""

    outcome: ResubmitOutcome
    order_key: str
    state: ProcessState | None
    next_attempt: int | None
    message: str


def resubmit(states: StateStore, order_key: str, *, operator: str = "operator",
             reason: str = "") -> ResubmitResult:
    """Return an order in Error to Pending so that its next attempt starts (S7); idempotent.

    The record changes only for RESUBMITTED; a concurrent resubmission that won the ETag race
    gives NOT_IN_ERROR. ``operator`` and ``reason`` are logged.

    Raises
    ------
    orders.stores.PreconditionFailedError
        If the record stayed in Error but kept changing under other writers.
    orders.stores.StoreError
        If the state store fails.
    """
    for _ in range(MAX_ETAG_TRIES):
        record = states.get(order_key)
        if record is None:
            return _done(ResubmitOutcome.NOT_FOUND, order_key, None, None,
                         f"order {order_key}: no state record")
        if record.process_state is not RESUBMITTABLE:
            return _not_in_error(record)
        try:
            states.replace(resubmit_change(record))
            break
        except PreconditionFailedError:
            continue  # another writer came first: re-read; a second resubmit sees Pending
    else:
        raise PreconditionFailedError(f"order {order_key}: the record kept changing; nothing "
                                      f"was resubmitted after {MAX_ETAG_TRIES} tries")
    order_logger(log, order_key, attempt=record.attempt).warning(
        "order %s resubmitted by %s (reason: %s): Error -> Pending, FailureCount %d -> 0; "
        "the starter starts attempt %d", order_key, operator, reason or "-",
        record.failure_count, record.attempt + 1)
    return _done(ResubmitOutcome.RESUBMITTED, order_key, ProcessState.PENDING,
                 record.attempt + 1,
                 f"order {order_key}: Error -> Pending; the starter will start attempt "
                 f"{record.attempt + 1} ({order_key}:{record.attempt + 1})")


def _not_in_error(record: StateRecord) -> ResubmitResult:
    return _done(ResubmitOutcome.NOT_IN_ERROR, record.order_key, record.process_state, None,
                 f"order {record.order_key}: ProcessState is {record.process_state.value}, not "
                 f"Error; nothing was changed (attempt {record.attempt}, LockedBy "
                 f"{record.locked_by or 'null'})")


def _done(outcome: ResubmitOutcome, order_key: str, state: ProcessState | None,
          next_attempt: int | None, message: str) -> ResubmitResult:
    record_resubmission(outcome.value)
    return ResubmitResult(outcome, order_key, state, next_attempt, message)
