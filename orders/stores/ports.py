"""Ports of the order database, the state store and the compensation log.

Three small ``typing.Protocol`` classes with no Azure import (STYLE 1). The embedded adapter
(SQLite) and the Azure adapter (Cosmos DB) both satisfy them and are checked by one
contract suite (``tests/orders/stores``). Reads answer ``None`` for a missing record; writes
raise the errors of :mod:`orders.stores.errors`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Final, Generic, Protocol, TypeVar

from orders.models import (
    SUPERVISED_STATES,
    CompensationEntry,
    Order,
    ProcessState,
    StateRecord,
)

T = TypeVar("T")

MAX_PAGE_SIZE = 1000
"""Upper bound for ``limit`` and ``page_size``: a scan is bounded by design (SPEC V1)."""

MAX_COUNT_LIMIT = 10_000
"""Most records one ``count_of_client`` reads (the per-client quota's cap, SPEC X3)."""

MAX_CHANGES_LIMIT = 10_000
"""Most changes one ``changes_since`` returns (the dashboard's charts, SPEC X8)."""

STARTABLE_STATES = (ProcessState.PENDING, ProcessState.COMPENSATING)
"""States a starter claims from when LockedBy is null: a new attempt of the order, or of
its compensation (SPEC S3, S9)."""


class AnyClient(Enum):
    """Type of :data:`ANY_CLIENT`."""

    ANY = "any"


ANY_CLIENT: Final = AnyClient.ANY
"""``find_startable``'s default: records of every client, legacy ones included."""


@dataclass(frozen=True)
class Created(Generic[T]):
    """Outcome of an idempotent create-if-absent.

    Attributes
    ----------
    record : T
        The stored record: the new one, or the existing one if it was already there.
    created : bool
        True if this call wrote it; False if an equal record existed.
    """

    record: T
    created: bool


@dataclass(frozen=True)
class ScanPage:
    """One page of the supervisor's scan, with its cost (SPEC V1: cost is observable).

    Attributes
    ----------
    records : tuple of StateRecord
        At most ``page_size`` records, in no guaranteed order across partitions.
    continuation : str or None
        Opaque continuation token for the next page; None when the backend knows the scan
        is complete. A token may come with a page that turns out to be the last.
    rows_read : int or None
        Rows the query read (SQLite); None for Cosmos DB.
    request_charge : float or None
        Request units charged for the page, summed over its requests (Cosmos DB);
        None for SQLite.
    """

    records: tuple[StateRecord, ...]
    continuation: str | None
    rows_read: int | None = None
    request_charge: float | None = None


@dataclass(frozen=True)
class StateChange:
    """A record's ProcessState, when it was created and when it last changed (SPEC X8)."""

    process_state: ProcessState
    created_at: datetime
    updated_at: datetime


class OrderStore(Protocol):
    """The order database: immutable orders keyed on OrderID (SPEC S1, X5)."""

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its OrderID exists; equal data again is accepted.

        Raises
        ------
        ConflictError
            If different data is stored under the same OrderID (nothing is changed).
        """
        ...

    def get(self, order_id: str) -> Order | None:
        """Return the order, or None if there is none."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class StateStore(Protocol):
    """The state store: one :class:`StateRecord` per order, changed only conditionally."""

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """Store ``record`` unless its OrderID exists (SPEC S1, X5).

        A record of the same submission (:meth:`StateRecord.same_submission`) is accepted
        and returned as stored, whatever its current ProcessState.

        Raises
        ------
        ConflictError
            If another submission's record exists under the same OrderID (unchanged).
        """
        ...

    def get(self, order_id: str) -> StateRecord | None:
        """Return the record with its ETag, or None if there is none."""
        ...

    def replace(self, record: StateRecord) -> StateRecord:
        """Write ``record`` if the stored ETag still equals ``record.etag`` (SPEC S3, S4, V2).

        Returns
        -------
        StateRecord
            The stored version, with the new ETag and ``updated_at``.

        Raises
        ------
        ValueError
            If ``record.etag`` is None.
        PreconditionFailedError
            If another writer changed the record since it was read (the record keeps that
            writer's version).
        NotFoundError
            If there is no record with that OrderID.
        """
        ...

    def claim_within(self, record: StateRecord, limit: int) -> StateRecord | None:
        """Write a starter's claim as :meth:`replace` does, unless ``limit`` attempts run.

        The check and the write are one step, so claims made at once never leave more than
        ``limit`` records Processing (MAX_PROCESSING, SPEC S3). SQLite counts Processing
        inside the claim's transaction; Cosmos DB, which has no transaction across
        partitions, takes a slot in an ETag-fenced slots document first.

        Returns
        -------
        StateRecord or None
            The stored claim; None, with nothing written, when there is no free slot
            (on Cosmos DB also when the slots document kept changing under contention).

        Raises
        ------
        ValueError
            If ``record`` is not Processing with a LockedBy, or ``limit`` is outside
            1..10000; and as :meth:`replace` (PreconditionFailedError, NotFoundError).
        """
        ...

    def find_startable(
        self, now: datetime, limit: int, state: ProcessState = ProcessState.PENDING,
        client_id: str | None | AnyClient = ANY_CLIENT,
    ) -> list[StateRecord]:
        """Return up to ``limit`` records the starter may claim (SPEC S3, V2, S9).

        ``state`` (Pending, or Compensating for a compensation attempt), LockedBy null,
        and NotBefore null or ``<= now``; of one client only unless ``client_id`` is
        :data:`ANY_CLIENT` (None: the legacy records, which have no client).

        Raises
        ------
        ValueError
            If ``state`` is not one of :data:`STARTABLE_STATES`.
        """
        ...

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """Return one page of the records in ``state``, for operators (SPEC S9, X8).

        Finds e.g. every CompensationFailed or Error record whatever its CompleteBy; pass
        the continuation token of a page to get the next one.
        """
        ...

    def scan_expired(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records whose CompleteBy expired (SPEC V1).

        Records in ``states`` with ``now - window <= CompleteBy < now``. Pass the same
        ``now``, ``window`` and ``states`` with a continuation token as for the first page.
        """
        ...

    def scan_overdue(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records whose CompleteBy expired before the window (SPEC V1).

        Records in ``states`` with ``CompleteBy < now - window``: the ones
        :meth:`scan_expired` no longer returns, so that none is forgotten. Served by the
        same index as :meth:`scan_expired` (one range per state), so it reads only the
        overdue records, never the records still running or finished. Pass the same
        ``now``, ``window`` and ``states`` with a continuation token as for the first page.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window``, ``page_size`` outside
            1..1000, or a token the store did not issue.
        """
        ...

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """Count records per ProcessState (all states if ``states`` is None) (SPEC X3)."""
        ...

    def find_recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        """Return up to ``limit`` records in ``state``, the latest ``updatedAt`` first (S7, S9).

        One bounded query on an index of (ProcessState, UpdatedAt): its cost grows with
        ``limit``, not with the records in ``state``.

        Raises
        ------
        ValueError
            If ``state`` is not a ProcessState or ``limit`` is outside 1..1000.
        """
        ...

    def changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        """Return the records changed at or after ``since``, latest ``updatedAt`` first (X8).

        At most ``limit`` of them, as :class:`StateChange` (no document is returned
        whole), read from the same index as :meth:`find_recent`.

        Raises
        ------
        ValueError
            If ``since`` is naive or ``limit`` is outside 1..10000.
        """
        ...

    def count_of_client(
        self, client_id: str, states: Iterable[ProcessState], limit: int
    ) -> int:
        """Count one client's records in ``states``, reading at most ``limit`` of them.

        The per-client quota's count (SPEC X3, S8): bounded, so its cost does not grow
        with a client's backlog, and served by an index on the client id in both stores.

        Returns
        -------
        int
            The count, or ``limit`` if there are at least that many.

        Raises
        ------
        ValueError
            If ``limit`` is outside 1..10000.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class CompensationLog(Protocol):
    """The compensation log: per order, the completed steps and their undos (SPEC S9, X4).

    Entries are keyed on OrderID + step and ordered by ``seq``, the order in which they
    were written, which is the order of completion.
    """

    def record(self, entry: CompensationEntry) -> Created[CompensationEntry]:
        """Append ``entry`` unless its step is logged; the same step again is accepted.

        Returns
        -------
        Created
            The stored entry with its ``seq``; ``created`` False if it was already there.

        Raises
        ------
        ConflictError
            If the step is logged with other details (nothing is changed).
        """
        ...

    def entries(self, order_id: str) -> list[CompensationEntry]:
        """Return the order's entries in ``seq`` order (empty if none)."""
        ...

    def purge_expired(self, now: datetime, limit: int) -> int:
        """Delete up to ``limit`` entries whose ``retainUntil`` has passed; return how many.

        Raises
        ------
        ValueError
            If ``now`` is naive or ``limit`` is outside 1..1000.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def check_startable(state: ProcessState) -> ProcessState:
    """Validate the ``state`` argument of ``find_startable``.

    Raises
    ------
    ValueError
        If ``state`` is not one of :data:`STARTABLE_STATES`.
    """
    if state not in STARTABLE_STATES:
        raise ValueError(f"state: must be one of {', '.join(s.value for s in STARTABLE_STATES)}"
                         f"; got {state!r}")
    return state


def check_claim(record: StateRecord, limit: int) -> int:
    """Validate the arguments of ``claim_within``; return ``limit``.

    Raises
    ------
    ValueError
        Naming the argument and the rule.
    """
    if record.process_state is not ProcessState.PROCESSING or record.locked_by is None:
        raise ValueError("record: a claim must be Processing with a LockedBy; got "
                         f"{record.process_state.value} with LockedBy {record.locked_by!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_COUNT_LIMIT:
        raise ValueError(f"limit: must be an int from 1 to {MAX_COUNT_LIMIT}; got {limit!r}")
    return limit


def check_now(now: datetime) -> datetime:
    """Validate a query's ``now`` (shared by the adapters).

    Raises
    ------
    ValueError
        If ``now`` is naive.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now: must be timezone-aware (UTC)")
    return now


def check_count(name: str, value: int) -> int:
    """Validate a bounded row count (``limit``, ``page_size``) against 1..MAX_PAGE_SIZE.

    Raises
    ------
    ValueError
        Naming the parameter, if the value is out of range or not an int.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise ValueError(f"{name}: must be an int from 1 to {MAX_PAGE_SIZE}; got {value!r}")
    return value


def check_window(window: timedelta) -> timedelta:
    """Validate a supervisor window.

    Raises
    ------
    ValueError
        If ``window`` is not a positive ``timedelta``.
    """
    if not isinstance(window, timedelta) or window <= timedelta(0):
        raise ValueError(f"window: must be a positive timedelta; got {window!r}")
    return window


def check_states(states: Iterable[ProcessState] | None) -> tuple[ProcessState, ...]:
    """Normalise a ``states`` argument: None means all states; duplicates are dropped.

    Raises
    ------
    ValueError
        If a value is not a ProcessState, or the tuple is empty.
    """
    if states is None:
        return tuple(ProcessState)
    result: list[ProcessState] = []
    for state in states:
        if not isinstance(state, ProcessState):
            raise ValueError(f"states: {state!r} is not a ProcessState")
        if state not in result:
            result.append(state)
    if not result:
        raise ValueError("states: must name at least one ProcessState")
    return tuple(result)
