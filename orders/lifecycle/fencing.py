"""Fenced updates of a state record: only the attempt named in LockedBy may write (S4).

Every state update an orchestration makes goes through :func:`fenced_update`: it re-reads
the record, checks that LockedBy still names the caller's instance id, and writes with the
ETag it read. A stale attempt (its record recovered and handed to a new attempt) is refused
instead of overwriting its replacement.
"""

from __future__ import annotations

from collections.abc import Callable

from orders.errors import OrderServiceError
from orders.lifecycle.transitions import IllegalTransitionError
from orders.models import ProcessState, StateRecord
from orders.stores import StateStore
from orders.stores.errors import PreconditionFailedError

MAX_ETAG_RETRIES = 5
"""Concurrent writers (the supervisor) may change the ETag between read and write."""


class FencedError(OrderServiceError):
    """LockedBy no longer names this instance: the attempt was superseded (permanent)."""


def fenced_update(states: StateStore, order_id: str, instance_id: str,
                  change: Callable[[StateRecord], StateRecord]) -> StateRecord:
    """Apply ``change`` to the record if LockedBy still equals ``instance_id``.

    Parameters
    ----------
    states : StateStore
        The state store.
    order_id : str
        The record's OrderID (partition key).
    instance_id : str
        The caller's orchestration instance id.
    change : callable
        Returns the updated record (``model_copy(update=...)``); it must keep ``etag``.

    Returns
    -------
    StateRecord
        The record as written (new ETag).

    Raises
    ------
    FencedError
        If the record is missing, LockedBy names another instance (SPEC S4), or the
        record is in a state from which ``change`` may not move it (an
        :class:`~orders.lifecycle.transitions.IllegalTransitionError` from ``change``:
        the supervisor gave up on the attempt meanwhile).
    PreconditionFailedError
        If the ETag kept changing under concurrent writers past the retry bound.
    """
    for _ in range(MAX_ETAG_RETRIES):
        record = states.get(order_id)
        if record is None or record.locked_by != instance_id:
            holder = record.locked_by if record else "no record"
            raise FencedError(f"order {order_id}: LockedBy is {holder!r}, not {instance_id!r}")
        try:
            changed = change(record)
        except IllegalTransitionError as exc:
            raise FencedError(str(exc)) from exc
        try:
            return states.replace(changed)
        except PreconditionFailedError:
            continue
    raise PreconditionFailedError(f"order {order_id}: ETag kept changing; gave up after "
                                  f"{MAX_ETAG_RETRIES} tries")


def fenced_or_none(states: StateStore, order_id: str, instance_id: str,
                   change: Callable[[StateRecord], StateRecord]) -> StateRecord | None:
    """Apply ``change`` as :func:`fenced_update` does, but answer a fenced attempt with None.

    Takes what :func:`fenced_update` takes; returns the record as written, or None where
    :func:`fenced_update` raises :class:`FencedError`. Other errors pass through.
    """
    try:
        return fenced_update(states, order_id, instance_id, change)
    except FencedError:
        return None


def fenced_finish(states: StateStore, order_id: str, instance_id: str,
                  change: Callable[[StateRecord], StateRecord],
                  final: ProcessState) -> bool:
    """Write an attempt's final state; tell whether the attempt was fenced.

    A rerun that finds its own final state already written (LockedBy still names it and
    ProcessState is ``final``) is not fenced, so the step is idempotent (SPEC X7).

    Parameters
    ----------
    states, order_id, instance_id, change
        As for :func:`fenced_update`; ``change`` moves the record to ``final``.
    final : ProcessState
        The state ``change`` writes.

    Returns
    -------
    bool
        True if a newer attempt owns the record or the record left Processing (nothing
        written).
    """
    if fenced_or_none(states, order_id, instance_id, change) is not None:
        return False
    record = states.get(order_id)
    mine = (record is not None and record.locked_by == instance_id
            and record.process_state is final)
    return not mine
