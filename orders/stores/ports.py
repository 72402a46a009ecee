"""Ports of the order database, the state store and the compensation log: the contract.

Told once here; the SQLite and Cosmos DB adapters both satisfy it, checked by one contract
suite (``tests/orders/stores``). Reads answer None for a missing record; writes raise
:mod:`orders.stores.errors`. Row bounds (``limit``, ``page_size``) are 1..MAX_PAGE_SIZE
unless a method says otherwise, and ``now``/``since`` must be timezone-aware.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, Final, Generic, Protocol, TypeVar

from orders.models import (
    SUPERVISED_STATES,
    CompensationEntry,
    Order,
    ProcessState,
    StateRecord,
)

T = TypeVar("T")

MAX_PAGE_SIZE = 1000
"""Upper bound for ``limit`` and ``page_size``: a scan is bounded by design (V1)."""

MAX_COUNT_LIMIT = 10_000
"""Most records one ``count_of_client`` reads (the per-client quota's cap, X3)."""

MAX_CHANGES_LIMIT = 10_000
"""Most changes one ``changes_since`` returns (the dashboard's charts, X8)."""

STARTABLE_STATES = (ProcessState.PENDING, ProcessState.COMPENSATING)
"""States a starter claims from when LockedBy is null: attempt or compensation (S3, S9)."""


class AnyClient(Enum):
    """Type of :data:`ANY_CLIENT`."""

    ANY = "any"


ANY_CLIENT: Final = AnyClient.ANY
"""``find_startable``'s default: records of every client, legacy ones included."""


@dataclass(frozen=True)
class Created(Generic[T]):
    """Outcome of a create-if-absent: the stored record, and whether this call wrote it."""

    record: T
    created: bool


@dataclass(frozen=True)
class ScanPage:
    """One page of a scan, with its cost (V1: cost is observable).

    ``records``: at most ``page_size``, in no guaranteed order across partitions.
    ``continuation``: opaque; None when the scan is complete (a token may still come with the
    last page). ``rows_read`` (SQLite) and ``request_charge`` (Cosmos DB RUs, summed over the
    page's requests) are None on the other backend.
    """

    records: tuple[StateRecord, ...]
    continuation: str | None
    rows_read: int | None = None
    request_charge: float | None = None


@dataclass(frozen=True)
class StateChange:
    """A record's ProcessState, when it was created and when it last changed (X8)."""

    process_state: ProcessState
    created_at: datetime
    updated_at: datetime


class OrderStore(Protocol):
    """The order database: immutable orders keyed on the order key (client and OrderID) (S1, X5)."""

    def create_if_absent(self, order: Order) -> Created[Order]:
        """Store ``order`` unless its order key exists; equal data again is accepted.

        Raises
        ------
        ConflictError
            If different data is stored under the same order key (nothing is changed).
        """
        ...

    def get(self, order_key: str) -> Order | None:
        """Return the order, or None if there is none."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class StateStore(Protocol):
    """The state store: one :class:`StateRecord` per order, changed only conditionally."""

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """Store ``record`` unless its order key exists (S1, X5).

        A record of the same submission (:meth:`StateRecord.same_submission`) is accepted and
        returned as stored, whatever its current ProcessState.

        Raises
        ------
        ConflictError
            If another submission's record exists under the same order key (unchanged).
        """
        ...

    def get(self, order_key: str) -> StateRecord | None:
        """Return the record with its ETag, or None if there is none."""
        ...

    def replace(self, record: StateRecord) -> StateRecord:
        """Write ``record`` if the stored ETag still equals ``record.etag`` (S3, S4, V2).

        Returns the stored version, with the new ETag and ``updated_at``.

        Raises
        ------
        ValueError
            If ``record.etag`` is None.
        PreconditionFailedError
            If another writer changed the record since it was read (its version is kept).
        NotFoundError
            If there is no record with that order key.
        """
        ...

    def claim_within(self, record: StateRecord, limit: int) -> StateRecord | None:
        """Write a starter's claim as :meth:`replace` does, unless ``limit`` attempts run.

        The check and the write are one step, so claims made at once never leave more than
        ``limit`` records Processing (MAX_PROCESSING, S3). SQLite counts Processing
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
        """Return up to ``limit`` records the starter may claim (S3, V2, S9).

        In ``state``, LockedBy null, NotBefore null or ``<= now``; of one client only unless
        ``client_id`` is :data:`ANY_CLIENT` (None: the legacy records, which have no client).

        Raises
        ------
        ValueError
            If ``state`` is not one of :data:`STARTABLE_STATES`, or ``now``/``limit`` is bad.
        """
        ...

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """Return one page of the records in ``state``, whatever their CompleteBy (S9, X8).

        Raises
        ------
        ValueError
            For a bad ``state`` or ``page_size`` (SQLite: or a token not issued for ``state``).
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
        """Return one page of records in ``states`` with ``now - window <= CompleteBy < now`` (V1).

        Pass the same ``now``, ``window`` and ``states`` with each continuation token.
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
        """Return one page of records in ``states`` with ``CompleteBy < now - window`` (V1).

        The ones :meth:`scan_expired` no longer returns, so none is forgotten; served by the same
        index, so it reads only the overdue records. Pass the same arguments with each token.
        Records without a CompleteBy never match either scan.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window``, a bad ``page_size``, or a foreign token.
        """
        ...

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """Count records per ProcessState, all states if ``states`` is None (X3)."""
        ...

    def count_in(self, states: Iterable[ProcessState]) -> int:
        """Count the records in any of ``states`` (admission control's total, X3): one query.

        Raises
        ------
        ValueError
            If ``states`` is None, empty, or holds something other than a ProcessState.
        """
        ...

    def save_snapshot(self, name: str, body: dict[str, Any]) -> None:
        """Store ``body`` (JSON-ready) as snapshot ``name``, replacing the last one.

        A periodic figure such as the ops summary, kept so readers do not recompute it:
        one point write, last writer wins (X8).
        """
        ...

    def load_snapshot(self, name: str) -> dict[str, Any] | None:
        """Return snapshot ``name`` as saved, or None: one point read."""
        ...

    def find_recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        """Return up to ``limit`` records in ``state``, latest ``updatedAt`` first (S7, S9).

        One bounded index query: its cost grows with ``limit``, not with the records in ``state``.

        Raises
        ------
        ValueError
            If ``state`` is not a ProcessState or ``limit`` is out of range.
        """
        ...

    def changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        """Return up to ``limit`` (1..10000) changes at or after ``since``, latest first (X8).

        Raises
        ------
        ValueError
            If ``since`` is naive or ``limit`` is out of range.
        """
        ...

    def count_of_client(
        self, client_id: str, states: Iterable[ProcessState], limit: int
    ) -> int:
        """Sum the ``work`` of one client's records in ``states``, reading at most ``limit``.

        The per-client quota's count (X3, S8), in units of work (an order of up to 10 lines
        is one, ``orders.models.state.work_of``): one query, bounded, so its cost does not
        grow with a client's backlog. ``limit`` is 1..10000; returns ``limit`` if the sum
        reaches it.

        Raises
        ------
        ValueError
            Naming ``client_id`` (not a client id by the one rule, ``azurekit.client_ids``),
            ``states`` (None, empty, or not ProcessStates) or ``limit`` (not an int from 1
            to 10000).
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class CompensationLog(Protocol):
    """The compensation log: per order, the completed steps and their undos (S9, X4).

    Entries are keyed on the order key + step and ordered by ``seq``, the order of writing.
    """

    def record(self, entry: CompensationEntry) -> Created[CompensationEntry]:
        """Append ``entry`` unless its step is logged; return it with its ``seq``.

        Raises
        ------
        ConflictError
            If the step is logged with other details (nothing is changed).
        """
        ...

    def record_all(self, entries: Sequence[CompensationEntry]
                   ) -> list[Created[CompensationEntry]]:
        """Record ``entries`` of one order, in order, as :meth:`record` would one by one.

        The outcome is that of :meth:`record` called for each in turn, in fewer round trips:
        each entry gets a ``seq`` after the one before it, an entry whose step is logged is
        compared, not written, and on a ConflictError the entries before the conflicting one
        stay written and none after it is. SQLite writes them in one transaction, so a crash
        leaves all or none of them; Cosmos DB reads the order's log once and then creates the
        entries one after another, in order (a crash can leave a prefix, as separate
        :meth:`record` calls would; a transactional batch is not used, the local test server
        refuses it).

        Returns
        -------
        list of Created
            One per entry, in the order given (empty for no entries).

        Raises
        ------
        ValueError
            If the entries are of more than one order, or two of them log the same step.
        ConflictError
            As :meth:`record`, for the first entry logged with other details.
        """
        ...

    def entries(self, order_key: str) -> list[CompensationEntry]:
        """Return the order's entries in ``seq`` order (empty if none)."""
        ...

    def purge_expired(self, now: datetime, limit: int) -> int:
        """Delete up to ``limit`` entries whose ``retainUntil`` has passed; return how many.

        Raises
        ------
        ValueError
            If ``now`` is naive or ``limit`` is out of range.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def check_one_order(entries: Sequence[CompensationEntry]) -> None:
    """Check that ``entries`` (for ``record_all``) are of one order with distinct steps.

    Raises
    ------
    ValueError
        Naming the second order key or the repeated step.
    """
    steps: set[str] = set()
    for index, entry in enumerate(entries):
        if entry.order_key != entries[0].order_key:
            raise ValueError(f"entries[{index}].orderId: {entry.order_key!r} is another order "
                             f"than entries[0]'s {entries[0].order_key!r}; one order at a time")
        if entry.step.value in steps:
            raise ValueError(f"entries[{index}].details.step: {entry.step.value} is given "
                             "twice; each step is logged once")
        steps.add(entry.step.value)


def check_startable(state: ProcessState) -> ProcessState:
    """Return ``state`` if ``find_startable`` accepts it, else raise ValueError."""
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
    """Return ``now`` if timezone-aware, else raise ValueError."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now: must be timezone-aware (UTC)")
    return now


def check_count(name: str, value: int, most: int = MAX_PAGE_SIZE) -> int:
    """Return a row count if it is an int in 1..``most``, else raise ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ValueError(f"{name}: must be an int from 1 to {most}; got {value!r}")
    return value


def check_window(window: timedelta) -> timedelta:
    """Return ``window`` if it is a positive ``timedelta``, else raise ValueError."""
    if not isinstance(window, timedelta) or window <= timedelta(0):
        raise ValueError(f"window: must be a positive timedelta; got {window!r}")
    return window


def check_states(states: Iterable[ProcessState] | None) -> tuple[ProcessState, ...]:
    """Return ``states`` as a tuple, duplicates dropped (None: all); ValueError if empty or bad."""
    if states is None:
        return tuple(ProcessState)
    return check_state_list(states)


def check_state_list(states: Iterable[ProcessState]) -> tuple[ProcessState, ...]:
    """Return ``states`` as a tuple, duplicates dropped; ValueError unless it names one or more.

    None is refused here: where a count sums states, "all of them" would count finished
    orders as in flight (X3), so a caller must name them.
    """
    if states is None or isinstance(states, str | bytes) or not isinstance(states, Iterable):
        raise ValueError(f"states: must be an iterable of ProcessState; got {states!r}")
    result: list[ProcessState] = []
    for state in states:
        if not isinstance(state, ProcessState):
            raise ValueError(f"states: {state!r} is not a ProcessState")
        if state not in result:
            result.append(state)
    if not result:
        raise ValueError("states: must name at least one ProcessState")
    return tuple(result)
