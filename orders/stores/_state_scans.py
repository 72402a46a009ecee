"""The argument checks and scan entry points both state store adapters share.

:class:`StateScans` implements the port's :meth:`~orders.stores.ports.StateStore.find_startable`,
:meth:`~orders.stores.ports.StateStore.scan_expired`,
:meth:`~orders.stores.ports.StateStore.scan_overdue`, ``find_recent`` and ``changes_since``
once: it checks the arguments as the port documents and hands an adapter's query the bounds
it reads. An adapter implements :meth:`StateScans._startable`,
:meth:`StateScans._count_of_client`, :meth:`StateScans._scan_deadlines`,
:meth:`StateScans._recent` and :meth:`StateScans._changes_since`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

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
    check_states,
    check_window,
)


class StateScans:
    """Base of the state store adapters: the port's scans, checked, on adapter queries."""

    def find_startable(
        self, now: datetime, limit: int, state: ProcessState = ProcessState.PENDING,
        client_id: str | None | AnyClient = ANY_CLIENT,
    ) -> list[StateRecord]:
        """Return unlocked records in ``state`` whose NotBefore has come (SPEC S3).

        Takes and returns what :meth:`orders.stores.ports.StateStore.find_startable` does.

        Raises
        ------
        ValueError
            If ``now`` is naive, ``limit`` is outside 1..1000 or ``state`` is neither
            Pending nor Compensating.
        """
        check_now(now)
        check_count("limit", limit)
        return self._startable(now, limit, check_startable(state), client_id)

    def count_of_client(self, client_id: str, states: Iterable[ProcessState],
                        limit: int) -> int:
        """Count one client's records in ``states``, at most ``limit``; see the port's method."""
        if not 1 <= limit <= MAX_COUNT_LIMIT:
            raise ValueError(f"limit: must be 1 to {MAX_COUNT_LIMIT}; got {limit}")
        return self._count_of_client(client_id, check_states(states), limit)

    def scan_expired(self, now: datetime, window: timedelta, page_size: int,
                     continuation: str | None = None,
                     states: tuple[ProcessState, ...] = SUPERVISED_STATES) -> ScanPage:
        """Return records with ``now - window <= CompleteBy < now``; see the port's method.

        Takes and returns what :meth:`orders.stores.ports.StateStore.scan_expired` does.
        """
        return self._scan_window(now, window, page_size, continuation, states, overdue=False)

    def scan_overdue(self, now: datetime, window: timedelta, page_size: int,
                     continuation: str | None = None,
                     states: tuple[ProcessState, ...] = SUPERVISED_STATES) -> ScanPage:
        """Return records with ``CompleteBy < now - window``; see the port's method.

        Takes and returns what :meth:`orders.stores.ports.StateStore.scan_overdue` does.
        """
        return self._scan_window(now, window, page_size, continuation, states, overdue=True)

    def find_recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        """Return up to ``limit`` records in ``state``, latest change first; see the port's."""
        (state,) = check_states([state])
        return self._recent(state, check_count("limit", limit))

    def changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        """Return up to ``limit`` changes at or after ``since``, latest first; see the port's."""
        check_now(since)
        if isinstance(limit, bool) or not isinstance(limit, int) or \
                not 1 <= limit <= MAX_CHANGES_LIMIT:
            raise ValueError(f"limit: must be an int from 1 to {MAX_CHANGES_LIMIT}; "
                             f"got {limit!r}")
        return self._changes_since(since, limit)

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
        """Read up to ``limit`` startable records in ``state`` (arguments checked)."""
        raise NotImplementedError

    def _count_of_client(self, client_id: str, states: tuple[ProcessState, ...],
                         limit: int) -> int:
        """Count up to ``limit`` records of ``client_id`` in ``states`` (arguments checked)."""
        raise NotImplementedError

    def _recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        """Read up to ``limit`` records in ``state``, latest UpdatedAt first (checked)."""
        raise NotImplementedError

    def _changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        """Read up to ``limit`` changes with UpdatedAt >= ``since``, latest first (checked)."""
        raise NotImplementedError

    def _scan_deadlines(self, low: datetime | None, high: datetime, page_size: int,
                        continuation: str | None,
                        states: tuple[ProcessState, ...]) -> ScanPage:
        """Read one page of records in ``states`` with ``low <= CompleteBy < high``.

        ``low`` None means no lower bound (a record without CompleteBy still never
        matches). ``page_size``, ``continuation`` and ``states`` are not checked yet.
        """
        raise NotImplementedError
