"""Helpers both state store adapters use to stamp and check a record before writing it.

Records changed with ``model_copy(update=...)`` skip pydantic validation, so a caller
could hand a store, say, Processing without LockedBy. The stores re-validate every record
they write, which keeps the SPEC S2 invariants true of everything stored.
"""

from __future__ import annotations

from datetime import datetime

from orders.models import StateRecord


def stamp(record: StateRecord, *, etag: str | None, now: datetime) -> StateRecord:
    """Return ``record`` re-validated, with a new ETag and ``updated_at`` set to ``now``.

    Parameters
    ----------
    record : StateRecord
        Record to be written.
    etag : str or None
        ETag to carry (None when the backend assigns it, as Cosmos DB does).
    now : datetime
        Write time, timezone-aware.

    Returns
    -------
    StateRecord
        A validated copy.

    Raises
    ------
    pydantic.ValidationError
        If the record breaks a field rule or an invariant of :class:`StateRecord`.
    """
    data = record.model_dump(by_alias=False)
    data.update(etag=etag, updated_at=now)
    return StateRecord.model_validate(data)


def require_etag(record: StateRecord) -> str:
    """Return the ETag a conditional write must match.

    Raises
    ------
    ValueError
        If ``record.etag`` is None (the record was never read from a store).
    """
    if record.etag is None:
        raise ValueError(
            "record.etag: must be the ETag read from the store; a conditional write "
            "needs it (SPEC S3, S4)"
        )
    return record.etag
