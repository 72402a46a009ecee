"""Operator queries over the state store: orders by state and stuck orders (S7, S9, V1).

``client`` (X10) filters the pages as they are read, so a listing reads until ``limit`` of
that client's records are found; legacy records have no client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from orders.models import SUPERVISED_STATES, ProcessState, StateRecord
from orders.stores import MAX_PAGE_SIZE, ScanPage, StateStore, iter_expired_pages

STUCK_WINDOW = timedelta(days=3650)
"""How far back a stuck CompleteBy is looked for: everything, unlike the supervisor."""


def check_limit(limit: int) -> int:
    """Validate a listing limit (1..1000).

    Raises
    ------
    ValueError
        Naming ``limit`` if out of range.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"limit: must be an int from 1 to {MAX_PAGE_SIZE}; got {limit!r}")
    return limit


def _first(pages: Iterator[ScanPage], limit: int,
           client: str | None = None) -> tuple[list[StateRecord], bool]:
    found: list[StateRecord] = []
    for page in pages:
        found.extend(r for r in page.records if client is None or r.client_id == client)
        if len(found) > limit:
            return found[:limit], True
    return found, False


def pages_by_state(states: StateStore, state: ProcessState,
                   page_size: int) -> Iterator[ScanPage]:
    """Yield every page of the records in ``state`` (``find_by_state``, in OrderID order)."""
    token: str | None = None
    while True:
        page = states.find_by_state(state, page_size, continuation=token)
        yield page
        if not page.records or page.continuation is None:
            return
        token = page.continuation


def list_by_state(states: StateStore, state: ProcessState, limit: int,
                  client: str | None = None) -> tuple[list[StateRecord], bool]:
    """Return up to ``limit`` records in ``state`` (S7), and whether more exist."""
    pages = pages_by_state(states, ProcessState(state), check_limit(limit))
    return _first(pages, limit, client)


def list_recent(states: StateStore, state: ProcessState, limit: int
                ) -> tuple[list[StateRecord], bool]:
    """Return up to ``limit`` records in ``state``, the latest change first (S7, S9)."""
    check_limit(limit)
    if limit < MAX_PAGE_SIZE:
        found = states.find_recent(state, limit + 1)
        return found[:limit], len(found) > limit
    found = states.find_recent(state, limit)
    return found, states.count_by_state([state])[state] > limit


def list_stuck(states: StateStore, now: datetime, limit: int,
               client: str | None = None) -> tuple[list[StateRecord], bool]:
    """Return supervised records (Processing, Compensating) whose CompleteBy has passed."""
    pages = iter_expired_pages(states, now, STUCK_WINDOW, check_limit(limit),
                               states=SUPERVISED_STATES)
    return _first(pages, limit, client)


def count_stuck(states: StateStore, now: datetime, cap: int = 10_000) -> tuple[int, bool]:
    """Count records past CompleteBy, reading at most ``cap``; and whether it stopped there."""
    count = 0
    for page in iter_expired_pages(states, now, STUCK_WINDOW, MAX_PAGE_SIZE,
                                   states=SUPERVISED_STATES):
        count += len(page.records)
        if count >= cap:
            return cap, True
    return count, False


Lister = Callable[[StateStore, datetime, int, str | None], tuple[list[StateRecord], bool]]


def _by_state(state: ProcessState) -> Lister:
    def list_state(states: StateStore, _now: datetime, limit: int, client: str | None = None
                   ) -> tuple[list[StateRecord], bool]:
        return list_by_state(states, state, limit, client)
    return list_state


LISTS: dict[str, Lister] = {
    "stuck": list_stuck,
    **{state.value.lower(): _by_state(state) for state in ProcessState},
}
"""What ``python -m opscli list <name>`` can list: ``stuck`` or a ProcessState name."""
