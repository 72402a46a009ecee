"""The dashboard's charts, terminal and in-flight orders per minute (X8; docs/operations.md)."""

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
STEP = timedelta(minutes=1)
CHANGES_READ = 5_000
"""Most changes read for the charts (the newest of the last hour)."""


def minute_series(changes: Sequence[StateChange], now: datetime, in_flight_now: int,
                  covered_from: datetime | None = None) -> dict[str, Any]:
    """Bucket the last hour's ``changes`` into minutes ending at ``now``, oldest first.

    Points before ``covered_from`` (the oldest change read, if the read stopped at its limit)
    are None. Gives ``minutes`` (ISO 8601 UTC ends), ``terminal`` and ``inFlight``.
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
