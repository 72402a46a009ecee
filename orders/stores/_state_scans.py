"""The argument checks and scan entry points both state store adapters share.

:class:`StateScans` checks the arguments as the port documents; an adapter implements only
the underscored queries.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from azurekit.client_ids import check_client_id
from orders.models import SUPERVISED_STATES, ProcessState, StateRecord
from orders.stores.ports import (
    ANY_CLIENT,
    MAX_CHANGES_LIMIT,
    MAX_COUNT_LIMIT,
    AnyClient,
    ScanPage,
    StateChange,
    check_count,
    check_now,
    check_startable,
    check_state_list,
    check_states,
    check_window,
)


class StateScans:
    """Base of the state store adapters: the port's scans, checked, on adapter queries."""

    def find_startable(
        self, now: datetime, limit: int, state: ProcessState = ProcessState.PENDING,
        client_id: str | None | AnyClient = ANY_CLIENT,
    ) -> list[StateRecord]:
        """See :meth:`orders.stores.ports.StateStore.find_startable`."""
        check_now(now)
        check_count("limit", limit)
        return self._startable(now, limit, check_startable(state), client_id)

    def count_of_client(self, client_id: str, states: Iterable[ProcessState],
                        limit: int) -> int:
        """See :meth:`orders.stores.ports.StateStore.count_of_client`."""
        try:  # the one client-id rule; None (a legacy record's) would count differently on
            check_client_id(client_id)  # the backends: SQLite's = never matches NULL
        except ValueError as exc:
            raise ValueError(f"client_id: {exc}") from None
        check_count("limit", limit, MAX_COUNT_LIMIT)
        return self._count_of_client(client_id, check_state_list(states), limit)

    def count_in(self, states: Iterable[ProcessState]) -> int:
        """See :meth:`orders.stores.ports.StateStore.count_in`."""
        return self._count_in(check_state_list(states))

    def scan_expired(self, now: datetime, window: timedelta, page_size: int,
                     continuation: str | None = None,
                     states: tuple[ProcessState, ...] = SUPERVISED_STATES) -> ScanPage:
        """See :meth:`orders.stores.ports.StateStore.scan_expired`."""
        return self._scan_window(now, window, page_size, continuation, states, overdue=False)

    def scan_overdue(self, now: datetime, window: timedelta, page_size: int,
                     continuation: str | None = None,
                     states: tuple[ProcessState, ...] = SUPERVISED_STATES) -> ScanPage:
        """See :meth:`orders.stores.ports.StateStore.scan_overdue`."""
        return self._scan_window(now, window, page_size, continuation, states, overdue=True)

    def find_recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        """See :meth:`orders.stores.ports.StateStore.find_recent`."""
        (state,) = check_states([state])
        return self._recent(state, check_count("limit", limit))

    def changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        """See :meth:`orders.stores.ports.StateStore.changes_since`."""
        check_now(since)
        return self._changes_since(since, check_count("limit", limit, MAX_CHANGES_LIMIT))

    def _scan_window(self, now: datetime, window: timedelta, page_size: int,
                     continuation: str | None, states: tuple[ProcessState, ...], *,
                     overdue: bool) -> ScanPage:
        check_now(now)
        check_window(window)
        low = None if overdue else now - window
        high = now - window if overdue else now
        return self._scan_deadlines(low, high, page_size, continuation, states)

    def _startable(self, now: datetime, limit: int, state: ProcessState,
                   client_id: str | None | AnyClient) -> list[StateRecord]:
        raise NotImplementedError

    def _count_of_client(self, client_id: str, states: tuple[ProcessState, ...],
                         limit: int) -> int:
        raise NotImplementedError

    def _count_in(self, states: tuple[ProcessState, ...]) -> int:
        raise NotImplementedError

    def _recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        raise NotImplementedError

    def _changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        raise NotImplementedError

    def _scan_deadlines(self, low: datetime | None, high: datetime, page_size: int,
                        continuation: str | None,
                        states: tuple[ProcessState, ...]) -> ScanPage:
        """Read one page with ``low <= CompleteBy < high`` (``low`` None: unbounded); unchecked."""
        raise NotImplementedError
