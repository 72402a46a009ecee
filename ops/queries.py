"""Operator queries over the state store: orders by state and stuck orders (SPEC S7, S9, V1).

Both go through the state store port, so they work on SQLite and Cosmos DB alike:
orders in one state (Error, CompensationFailed, ...) through ``find_by_state`` pages, stuck
orders (Processing or Compensating with CompleteBy in the past) through the supervisor's
bounded ``scan_expired``, with a window wide enough to include records older than the
supervisor's own window (``SUPERVISOR_SCAN_WINDOW_S``; the supervisor recovers those with
a second scan and an ``OverdueOrder`` alert).

Either can be limited to one client's orders (``client``: the records whose ``clientId`` is
that client, SPEC X10). The filter is applied to the pages as they are read, so it reads
every record of the state (or every stuck one) until ``limit`` of the client's are found;
legacy records of the shared-queue era have no client and are listed without ``client``.
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
    """Return up to ``limit`` records in ``state`` (SPEC S7: find failed orders).

    Parameters
    ----------
    states : StateStore
        The state store.
    state : ProcessState
        E.g. Error or CompensationFailed.
    limit : int
        Most records to return, 1..1000.
    client : str, optional
        Only this client's orders.

    Returns
    -------
    (list of StateRecord, bool)
        The records, and whether more exist than were returned.
    """
    pages = pages_by_state(states, ProcessState(state), check_limit(limit))
    return _first(pages, limit, client)


def list_recent(states: StateStore, state: ProcessState, limit: int
                ) -> tuple[list[StateRecord], bool]:
    """Return up to ``limit`` records in ``state``, the latest change first (S7, S9).

    One bounded ``find_recent`` (and at ``limit`` 1000, one count of the state to tell
    whether there are more). Returns what :func:`list_by_state` does.
    """
    check_limit(limit)
    if limit < MAX_PAGE_SIZE:
        found = states.find_recent(state, limit + 1)
        return found[:limit], len(found) > limit
    found = states.find_recent(state, limit)
    return found, states.count_by_state([state])[state] > limit


def list_stuck(states: StateStore, now: datetime, limit: int,
               client: str | None = None) -> tuple[list[StateRecord], bool]:
    """Return supervised records (Processing, Compensating) whose CompleteBy has passed.

    Takes ``states``, ``limit`` and ``client`` and returns what :func:`list_by_state`
    does; ``now`` is the timezone-aware current time.
    """
    pages = iter_expired_pages(states, now, STUCK_WINDOW, check_limit(limit),
                               states=SUPERVISED_STATES)
    return _first(pages, limit, client)


def count_stuck(states: StateStore, now: datetime, cap: int = 10_000) -> tuple[int, bool]:
    """Count supervised records whose CompleteBy has passed, reading at most ``cap`` of them.

    Returns
    -------
    (int, bool)
        The count, and whether the scan stopped at ``cap``.
    """
    count = 0
    for page in iter_expired_pages(states, now, STUCK_WINDOW, MAX_PAGE_SIZE,
                                   states=SUPERVISED_STATES):
        count += len(page.records)
        if count >= cap:
            return cap, True
    return count, False


Lister = Callable[[StateStore, datetime, int, str | None], tuple[list[StateRecord], bool]]
"""A list command: the store, now, the most records to list, and the client (or None)."""


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
