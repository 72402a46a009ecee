"""The dashboard's charts: terminal orders per minute and the in-flight count, last hour (X8).

Both series come from one bounded read, the newest :data:`CHANGES_READ` state records
changed in the last hour (``changes_since``: ProcessState, createdAt, updatedAt), and the
in-flight count now (the summary's, from the counts by state): a record not in flight
(Processed, Error, Compensated, CompensationFailed) became so at its ``updatedAt``, so the
count at the end of a minute is the count now, less the records created since, plus the
records that left the in-flight states since. The last point equals the summary's
``inFlight``, and a call reads the same at a thousand orders as at a million.

When more records changed in the last hour than were read, the series are exact back to
the oldest change read (``coveredFrom``) and None before it (``truncated``). An order
resubmitted from Error counts at its latest transition only.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

from orders.models import IN_FLIGHT_STATES, format_utc
from orders.stores import StateStore
from orders.stores.ports import StateChange

WINDOW = timedelta(hours=1)
"""How far back the charts go."""
STEP = timedelta(minutes=1)
"""One point per minute."""
CHANGES_READ = 5_000
"""Most changes read for the charts (the newest of the last hour)."""


def minute_series(changes: Sequence[StateChange], now: datetime, in_flight_now: int,
                  covered_from: datetime | None = None) -> dict[str, Any]:
    """Bucket the last hour's ``changes`` into minutes.

    Parameters
    ----------
    changes : sequence of StateChange
        Every record changed since ``covered_from`` (or since ``now - WINDOW``).
    now : datetime
        Timezone-aware current time; the last minute ends here.
    in_flight_now : int
        Records in flight now.
    covered_from : datetime, optional
        The oldest change read, if the read stopped at its limit: earlier points are None.

    Returns
    -------
    dict
        ``minutes`` (the end of each minute, ISO 8601 UTC, oldest first), ``terminal``
        (records that left the in-flight states during each minute) and ``inFlight``
        (records in flight at the end of each minute).
    """
    ends = [now - WINDOW + STEP * (i + 1) for i in range(int(WINDOW / STEP))]
    start = now - WINDOW
    terminal = [0] * len(ends)
    since = [0] * (len(ends) + 1)  # in flight at ends[i] = now's + sum(since[i + 1:])
    for change in changes:
        since[bisect_left(ends, change.created_at)] -= 1  # created after the earlier ends
        if change.process_state not in IN_FLIGHT_STATES:
            since[bisect_left(ends, change.updated_at)] += 1  # ended after the earlier ends
            if start < change.updated_at <= now:
                terminal[min(int((change.updated_at - start) / STEP), len(ends) - 1)] += 1
    later = list(accumulate(reversed(since[1:])))[::-1]  # later[i] = sum(since[i + 1:])
    in_flight: list[int | None] = [in_flight_now + n for n in later]
    shown_terminal: list[int | None] = list(terminal)
    if covered_from is not None:
        for i, end in enumerate(ends):
            if end < covered_from:
                in_flight[i] = None
            if end - STEP < covered_from:
                shown_terminal[i] = None
    return {"minutes": [format_utc(e) for e in ends], "terminal": shown_terminal,
            "inFlight": in_flight}


def charts(states: StateStore, now: datetime, in_flight_now: int) -> dict[str, Any]:
    """Return the last hour's series (:func:`minute_series`), ``truncated`` and ``coveredFrom``."""
    changes = states.changes_since(now - WINDOW, CHANGES_READ)
    truncated = len(changes) >= CHANGES_READ
    covered_from = changes[-1].updated_at if truncated else None
    return {**minute_series(changes, now, in_flight_now, covered_from),
            "truncated": truncated, "changesRead": len(changes),
            "coveredFrom": format_utc(covered_from) if covered_from else None}
