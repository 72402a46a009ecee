"""Paging through the supervisor's scans within a page budget (V1)."""

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
    """Follow continuation tokens through one bounded scan (V1): expired, or ``overdue``.

    Stops after an empty page (still yielded, so its cost counts), a page without a token, or
    ``max_pages`` pages. Stopping on an empty page is safe on Cosmos DB: the azure-cosmos SDK
    itself keeps fetching while the service returns empty pages with a token.

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
