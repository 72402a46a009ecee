"""The dashboard's charts: terminal orders per minute and the in-flight count, last hour (X8).

Both series are derived from the state records themselves, the same store every other
figure comes from: a record that is not in flight (Processed, Error, Compensated,
CompensationFailed) became so at its ``updatedAt``; a record was in flight from its
``createdAt`` until then (or until now, if it still is). The in-flight value of a minute is
the count at the minute's end, so the last point equals the summary's ``inFlight``.

Reading the records goes through the state store port page by page (``find_by_state``),
at most :data:`MAX_RECORDS` of them: on a store larger than that the chart says it is
``truncated``. An order resubmitted from Error counts at its latest transition only.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

from ops.queries import pages_by_state
from orders.models import IN_FLIGHT_STATES, ProcessState, StateRecord, format_utc
from orders.stores import MAX_PAGE_SIZE, StateStore

WINDOW = timedelta(hours=1)
"""How far back the charts go."""
STEP = timedelta(minutes=1)
"""One point per minute."""
MAX_RECORDS = 50_000
"""Most state records read for the charts."""


def read_records(states: StateStore, limit: int = MAX_RECORDS) -> tuple[list[StateRecord], bool]:
    """Read up to ``limit`` state records of every ProcessState.

    Returns
    -------
    (list of StateRecord, bool)
        The records, and whether the store holds more than were read.
    """
    found: list[StateRecord] = []
    for state in ProcessState:
        for page in pages_by_state(states, state, MAX_PAGE_SIZE):
            found.extend(page.records)
            if len(found) >= limit:
                return found[:limit], True
    return found, False


def minute_series(records: list[StateRecord], now: datetime) -> dict[str, Any]:
    """Bucket ``records`` into the last hour's minutes.

    Parameters
    ----------
    records : list of StateRecord
        State records (from :func:`read_records`).
    now : datetime
        Timezone-aware current time; the last minute ends here.

    Returns
    -------
    dict
        ``minutes`` (the end of each minute, ISO 8601 UTC, oldest first), ``terminal``
        (records that left the in-flight states during each minute) and ``inFlight``
        (records in flight at the end of each minute).
    """
    ends = [now - WINDOW + STEP * (i + 1) for i in range(int(WINDOW / STEP))]
    terminal = [0] * len(ends)
    changes = [0] * (len(ends) + 1)  # in flight at ends[i] = sum(changes[:i + 1])
    start = now - WINDOW
    for record in records:
        done_at = None if record.process_state in IN_FLIGHT_STATES else record.updated_at
        if done_at is not None and start < done_at <= now:
            terminal[min(int((done_at - start) / STEP), len(ends) - 1)] += 1
        first = bisect_left(ends, record.created_at)  # the first end at or after creation
        last = len(ends) if done_at is None else bisect_left(ends, done_at)
        if first < last:
            changes[first] += 1
            changes[last] -= 1
    in_flight = list(accumulate(changes[:-1]))
    return {"minutes": [format_utc(e) for e in ends], "terminal": terminal,
            "inFlight": in_flight}


def charts(states: StateStore, now: datetime) -> dict[str, Any]:
    """Return the last hour's series (:func:`minute_series`) with ``truncated``."""
    records, truncated = read_records(states)
    return {**minute_series(records, now), "truncated": truncated}
