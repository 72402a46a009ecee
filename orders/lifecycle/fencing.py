"""Fenced updates of a state record: only the attempt named in LockedBy may write (S4)."""

from __future__ import annotations

from collections.abc import Callable

from orders.errors import OrderServiceError
from orders.lifecycle.transitions import IllegalTransitionError
from orders.models import ProcessState, StateRecord
from orders.stores import StateStore
from orders.stores.errors import PreconditionFailedError

MAX_ETAG_RETRIES = 5


class FencedError(OrderServiceError):
    """LockedBy no longer names this instance: the attempt was superseded (permanent)."""


def fenced_update(states: StateStore, order_key: str, instance_id: str,
                  change: Callable[[StateRecord], StateRecord]) -> StateRecord:
    """Write ``change(record)`` with the read ETag if LockedBy is still ``instance_id``.

    Raises FencedError if the record is missing, another's, or ``change`` raised
    IllegalTransitionError; PreconditionFailedError past :data:`MAX_ETAG_RETRIES` ETag changes.
    """
    for _ in range(MAX_ETAG_RETRIES):
        record = states.get(order_key)
        if record is None or record.locked_by != instance_id:
            holder = record.locked_by if record else "no record"
            raise FencedError(f"order {order_key}: LockedBy is {holder!r}, not {instance_id!r}")
        try:
            changed = change(record)
        except IllegalTransitionError as exc:
            raise FencedError(str(exc)) from exc
        try:
            return states.replace(changed)
        except PreconditionFailedError:
            continue
    raise PreconditionFailedError(f"order {order_key}: ETag kept changing; gave up after "
                                  f"{MAX_ETAG_RETRIES} tries")


def fenced_or_none(states: StateStore, order_key: str, instance_id: str,
                   change: Callable[[StateRecord], StateRecord]) -> StateRecord | None:
    """Apply ``change`` as :func:`fenced_update` does, but return None when fenced."""
    try:
        return fenced_update(states, order_key, instance_id, change)
    except FencedError:
        return None


def fenced_finish(states: StateStore, order_key: str, instance_id: str,
                  change: Callable[[StateRecord], StateRecord],
                  final: ProcessState) -> bool:
    """Write an attempt's ``final`` state; True if fenced (a rerun finding its own is not, X7)."""
    return finished_record(states, order_key, instance_id, change, final) is None


def finished_record(states: StateStore, order_key: str, instance_id: str,
                    change: Callable[[StateRecord], StateRecord],
                    final: ProcessState) -> StateRecord | None:
    """Write an attempt's ``final`` state as :func:`fenced_finish`; the record, None if fenced.

    The record is the one written (with its new ETag), or on a rerun the one found.
    """
    written = fenced_or_none(states, order_key, instance_id, change)
    if written is not None:
        return written
    record = states.get(order_key)
    mine = (record is not None and record.locked_by == instance_id
            and record.process_state is final)
    return record if mine else None
