"""Operator resubmission of an order in Error: start attempt n+1, at most once (SPEC S7, S3).

Resubmitting does not start anything itself: it returns the state record from Error to
Pending with LockedBy null by a conditional update (ETag), and the starter claims it and
starts the next attempt (``<OrderID>:<n+1>``) as for any Pending record. A second call finds
the record no longer in Error and changes nothing, so running the command twice (or two
operators at once: only one ETag write wins) starts one attempt.

FailureCount is reset to 0: the operator has investigated and removed the cause, so the
order gets the supervisor's full MAX_FAILURES attempts again, as a new submission would.
The retry budget of SPEC X2 (:mod:`orders.budget`) therefore holds per submission or
resubmission; each resubmission is logged with the operator's name and reason and counted
(metric ``orders.resubmissions``). The attempt number keeps counting, so every attempt has
its own instance id and history.
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
"""The only state an operator resubmits from."""

MAX_ETAG_TRIES = 3
"""Re-reads after losing an ETag race before giving up."""


class ResubmitOutcome(StrEnum):
    """What :func:`resubmit` did."""

    RESUBMITTED = "resubmitted"
    """Error -> Pending: the starter will start the next attempt."""
    NOT_IN_ERROR = "not_in_error"
    """The record is not in Error (already resubmitted, running, done): nothing changed."""
    NOT_FOUND = "not_found"
    """No state record with this OrderID."""


@dataclass(frozen=True)
class ResubmitResult:
    """Outcome of one resubmission.

    Attributes
    ----------
    outcome : ResubmitOutcome
        What happened.
    order_id : str
        The order.
    state : ProcessState or None
        ProcessState after the call (None if not found).
    next_attempt : int or None
        Attempt number the starter will start (RESUBMITTED only).
    message : str
        One sentence for the operator.
    """

    outcome: ResubmitOutcome
    order_id: str
    state: ProcessState | None
    next_attempt: int | None
    message: str


def resubmit(states: StateStore, order_id: str, *, operator: str = "operator",
             reason: str = "") -> ResubmitResult:
    """Return an order in Error to Pending so that its next attempt starts (SPEC S7).

    Parameters
    ----------
    states : StateStore
        The state store.
    order_id : str
        The order's OrderID.
    operator : str
        Who resubmits (logged).
    reason : str
        Why (logged).

    Returns
    -------
    ResubmitResult
        RESUBMITTED, NOT_IN_ERROR (including a concurrent resubmission that won the ETag
        race) or NOT_FOUND; the record is changed only for RESUBMITTED.

    Raises
    ------
    orders.stores.PreconditionFailedError
        If the record stayed in Error but kept changing under other writers.
    orders.stores.StoreError
        If the state store fails.
    """
    for _ in range(MAX_ETAG_TRIES):
        record = states.get(order_id)
        if record is None:
            return _done(ResubmitOutcome.NOT_FOUND, order_id, None, None,
                         f"order {order_id}: no state record")
        if record.process_state is not RESUBMITTABLE:
            return _not_in_error(record)
        try:
            states.replace(resubmit_change(record))
            break
        except PreconditionFailedError:
            continue  # another writer came first: re-read; a second resubmit sees Pending
    else:
        raise PreconditionFailedError(f"order {order_id}: the record kept changing; nothing "
                                      f"was resubmitted after {MAX_ETAG_TRIES} tries")
    order_logger(log, order_id, attempt=record.attempt).warning(
        "order %s resubmitted by %s (reason: %s): Error -> Pending, FailureCount %d -> 0; "
        "the starter starts attempt %d", order_id, operator, reason or "-",
        record.failure_count, record.attempt + 1)
    return _done(ResubmitOutcome.RESUBMITTED, order_id, ProcessState.PENDING,
                 record.attempt + 1,
                 f"order {order_id}: Error -> Pending; the starter will start attempt "
                 f"{record.attempt + 1} ({order_id}:{record.attempt + 1})")


def _not_in_error(record: StateRecord) -> ResubmitResult:
    return _done(ResubmitOutcome.NOT_IN_ERROR, record.order_id, record.process_state, None,
                 f"order {record.order_id}: ProcessState is {record.process_state.value}, not "
                 f"Error; nothing was changed (attempt {record.attempt}, LockedBy "
                 f"{record.locked_by or 'null'})")


def _done(outcome: ResubmitOutcome, order_id: str, state: ProcessState | None,
          next_attempt: int | None, message: str) -> ResubmitResult:
    record_resubmission(outcome.value)
    return ResubmitResult(outcome, order_id, state, next_attempt, message)
