"""Paging through the supervisor's scans, one continuation token after another (SPEC V1).

The scans themselves are port methods (:class:`orders.stores.ports.StateStore`); these
generators follow their continuation tokens within a record budget, so a caller reads
pages until it has what it needs and never more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from orders.models import SUPERVISED_STATES, ProcessState
from orders.stores.ports import ScanPage, StateStore


def iter_expired_pages(
    store: StateStore,
    now: datetime,
    window: timedelta,
    page_size: int,
    *,
    max_pages: int = 1000,
    states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    overdue: bool = False,
) -> Iterator[ScanPage]:
    """Follow continuation tokens through one bounded supervisor scan (SPEC V1).

    Stops after an empty page even if it carries a token, after a page without a token,
    or after ``max_pages`` pages. The empty page is still yielded, so its cost is counted.
    Stopping on an empty page is safe on Cosmos DB because the azure-cosmos SDK itself
    keeps fetching while the service returns empty pages with a continuation token; an
    empty page reaching us therefore ends the result set.

    Parameters
    ----------
    store : StateStore
        Store to scan.
    now : datetime
        Scan time (timezone-aware), the same for every page.
    window : timedelta
        How far back CompleteBy may lie, > 0.
    page_size : int
        Records per page, 1..:data:`MAX_PAGE_SIZE`.
    max_pages : int
        Hard bound on pages per scan, >= 1.
    states : tuple of ProcessState
        States to scan.
    overdue : bool
        Scan the records whose CompleteBy lies before ``now - window`` (the supervisor's
        window, :meth:`StateStore.scan_overdue`) instead of those within it.

    Yields
    ------
    ScanPage
        Each page as the store returned it.

    Raises
    ------
    ValueError
        If ``max_pages`` < 1 (and whatever the store raises for bad arguments).
    """
    scan = store.scan_overdue if overdue else store.scan_expired
    return _follow(scan, now, window, page_size, max_pages, states)


def _follow(
    scan: Callable[..., ScanPage],
    now: datetime,
    window: timedelta,
    page_size: int,
    max_pages: int,
    states: tuple[ProcessState, ...],
) -> Iterator[ScanPage]:
    if max_pages < 1:
        raise ValueError(f"max_pages: must be >= 1; got {max_pages}")

    def pages() -> Iterator[ScanPage]:
        token: str | None = None
        for _ in range(max_pages):
            page = scan(now, window, page_size, continuation=token, states=states)
            yield page
            if not page.records or page.continuation is None:
                return
            token = page.continuation

    return pages()
