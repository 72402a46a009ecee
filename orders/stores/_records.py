"""Helpers the store adapters share to stamp, check and compare what they write.

Records changed with ``model_copy(update=...)`` skip pydantic validation, so the state
stores re-validate every record they write (S2). The ``keep_*`` helpers decide once what a
taken key means: the same submission is accepted, anything else is a ConflictError (S1).
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from orders.models import CompensationEntry, Order, StateRecord
from orders.stores.errors import ConflictError
from orders.stores.ports import Created

T = TypeVar("T")


def stamp(record: StateRecord, *, etag: str | None, now: datetime) -> StateRecord:
    """Return ``record`` re-validated with ``etag`` (None: the backend's) and ``updated_at``."""
    data = record.model_dump(by_alias=False)
    data.update(etag=etag, updated_at=now)
    return StateRecord.model_validate(data)


def require_etag(record: StateRecord) -> str:
    """Return the ETag a conditional write must match; ValueError if the record was never read."""
    if record.etag is None:
        raise ValueError(
            "record.etag: must be the ETag read from the store; a conditional write "
            "needs it (S3, S4)"
        )
    return record.etag



def keep_record(existing: StateRecord, record: StateRecord) -> Created[StateRecord]:
    """Accept ``existing`` if it is the same submission as ``record``; else raise ConflictError."""
    return _keep(existing, existing.same_submission(record),
                 f"order key {record.order_key!r}: a state record of another submission "
                 f"(replyTo {existing.reply_to!r}) already exists; nothing was overwritten "
                 "(S1)")


def keep_order(existing: Order, order: Order) -> Created[Order]:
    """Accept ``existing`` if it holds the same data as ``order``; else raise ConflictError."""
    return _keep(existing, existing.same_data(order),
                 f"order key {order.order_key!r}: a different order is already stored under "
                 "this key; nothing was overwritten (S1)")


def keep_step(existing: CompensationEntry, entry: CompensationEntry) -> Created[CompensationEntry]:
    """Accept ``existing`` if it logs the same step as ``entry``; else raise ConflictError."""
    return _keep(existing, existing.same_step(entry),
                 f"order key {entry.order_key!r}: step {entry.step.value} is logged with other "
                 "details; nothing was overwritten (S9)")


def _keep(existing: T, same: bool, conflict: str) -> Created[T]:
    if not same:
        raise ConflictError(conflict)
    return Created(existing, created=False)
