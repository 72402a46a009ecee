"""State store on Azure Cosmos DB (the Azure adapter of the state store port).

Implements :class:`orders.stores.ports.StateStore` on one container partitioned on
``/orderId``. Conditional writes send the ETag with ``MatchConditions.IfNotModified``;
Cosmos DB answers 412 when another writer came first, which becomes
:class:`~orders.stores.errors.PreconditionFailedError`.

Query shapes, and why (each also runs on the local test server ``@vercel/cosmosdb-server``,
whose gaps are pinned by ``tests/orders/stores/test_cosmos_server_gaps.py``):

* Scans are cross-partition filters without ORDER BY, TOP, OFFSET/LIMIT or DISTINCT, so
  the gateway streams them page by page with continuation tokens; the page size is
  ``max_item_count``. The starter takes only the first page.
* Counts by state are one ``SELECT VALUE COUNT(1) ... WHERE c.processState = @state``
  per state: the test server cannot parse GROUP BY (or OFFSET/LIMIT, DISTINCT), and one
  count per state also lets admission control count in-flight states only.
* No query here targets one partition. The test server ignores the ``partition_key=``
  argument of a query, so a single-partition query must also filter
  ``c.orderId = @pk`` in its WHERE clause.
* No transactional batch: every change is one item write (the test server rejects the
  Python SDK's batch requests, and one item per order needs none).
* Reading a missing item: the test server answers 500 instead of 404; the repository's
  npm install patches it (``tests/orders/stores/patches``), the adapter keeps real point reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, cast

from azure.core import MatchConditions
from azure.core.paging import PageIterator
from azure.cosmos import ContainerProxy

from clocks import Clock, SystemClock
from orders.models import SUPERVISED_STATES, ProcessState, StateRecord, format_utc
from orders.stores._cosmos import RequestCharge, from_document, to_document, translated
from orders.stores._records import require_etag, stamp
from orders.stores.errors import ConflictError, NotFoundError, StoreError
from orders.stores.ports import (
    Created,
    ScanPage,
    check_count,
    check_now,
    check_startable,
    check_states,
    check_window,
)

_STARTABLE_SQL = (
    "SELECT * FROM c WHERE c.processState = @state AND IS_NULL(c.lockedBy) "
    "AND (IS_NULL(c.notBefore) OR c.notBefore <= @now)"
)
_BY_STATE_SQL = "SELECT * FROM c WHERE c.processState = @state"
_COUNT_SQL = "SELECT VALUE COUNT(1) FROM c WHERE c.processState = @state"


def _record(document: dict[str, Any]) -> StateRecord:
    return StateRecord.model_validate(from_document(document, with_etag=True))


class CosmosStateStore:
    """State store in a Cosmos DB container (SPEC S2, S3, V1, V2, X4).

    Parameters
    ----------
    container : azure.cosmos.ContainerProxy
        Container partitioned on ``/orderId`` (see :func:`orders.stores.create_stores`).
    clock : Clock, optional
        Time source for ``updated_at``; :class:`clocks.SystemClock` by default.
    """

    def __init__(self, container: ContainerProxy, *, clock: Clock | None = None) -> None:
        self._container = container
        self._clock = clock or SystemClock()

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """Store ``record`` unless its OrderID exists (SPEC S1, X5); see the port.

        Raises
        ------
        ConflictError
            If another submission's record is stored under the same OrderID.
        pydantic.ValidationError
            If ``record`` breaks a :class:`StateRecord` rule.
        """
        stored = stamp(record, etag=None, now=self._clock.now())
        what = f"create state record {record.order_id!r}"
        try:
            with translated(what):
                document = self._container.create_item(
                    body=to_document(stored, stored.order_id)
                )
            return Created(_record(document), created=True)
        except ConflictError:
            pass  # 409: the id exists; compare below
        existing = self.get(record.order_id)
        if existing is None:
            raise StoreError(f"{what}: Cosmos DB reported a conflict but the record is gone")
        if not existing.same_submission(record):
            raise ConflictError(
                f"orderId {record.order_id!r}: a state record of another submission "
                f"(replyTo {existing.reply_to!r}) already exists; nothing was overwritten "
                "(SPEC S1)"
            )
        return Created(existing, created=False)

    def get(self, order_id: str) -> StateRecord | None:
        """Return the record with its ETag (a point read), or None."""
        try:
            with translated(f"read state record {order_id!r}"):
                document = self._container.read_item(item=order_id, partition_key=order_id)
        except NotFoundError:
            return None
        return _record(document)

    def replace(self, record: StateRecord) -> StateRecord:
        """Replace the item if its ETag still equals ``record.etag`` (IfNotModified).

        Raises
        ------
        ValueError
            If ``record.etag`` is None.
        PreconditionFailedError
            On 412: another writer changed the record (its version is kept).
        NotFoundError
            On 404: no record with this OrderID.
        """
        expected = require_etag(record)
        stored = stamp(record, etag=None, now=self._clock.now())
        with translated(f"replace state record {record.order_id!r}"):
            document = self._container.replace_item(
                item=record.order_id,
                body=to_document(stored, stored.order_id),
                etag=expected,
                match_condition=MatchConditions.IfNotModified,
            )
        return _record(document)

    def find_startable(
        self, now: datetime, limit: int, state: ProcessState = ProcessState.PENDING
    ) -> list[StateRecord]:
        """Return up to ``limit`` unlocked records in ``state`` whose NotBefore has come (S3).

        One cross-partition page of at most ``limit`` items; no order is guaranteed.

        Raises
        ------
        ValueError
            If ``now`` is naive, ``limit`` is outside 1..1000 or ``state`` is neither
            Pending nor Compensating.
        """
        check_now(now)
        check_count("limit", limit)
        check_startable(state)
        documents, _, _ = self._page(
            _STARTABLE_SQL,
            [
                {"name": "@state", "value": state.value},
                {"name": "@now", "value": format_utc(now)},
            ],
            limit,
            None,
        )
        return [_record(document) for document in documents]

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """Return one page of the records in ``state`` (a streamed cross-partition query).

        Raises
        ------
        ValueError
            If ``state`` is not a ProcessState or ``page_size`` is outside 1..1000.
        """
        (state,) = check_states([state])
        check_count("page_size", page_size)
        documents, token, charge = self._page(
            _BY_STATE_SQL, [{"name": "@state", "value": state.value}], page_size, continuation)
        return ScanPage(records=tuple(_record(document) for document in documents),
                        continuation=token, request_charge=charge.total)

    def scan_expired(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records with ``now - window <= CompleteBy < now`` (SPEC V1).

        A streamed cross-partition query (no ORDER BY); ``request_charge`` is the sum of
        ``x-ms-request-charge`` over the page's requests.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window`` or ``page_size`` outside 1..1000.
        """
        check_now(now)
        check_window(window)
        return self._scan_deadlines(
            "c.completeBy >= @low AND c.completeBy < @high",
            {"@low": format_utc(now - window), "@high": format_utc(now)},
            page_size, continuation, states)

    def scan_overdue(
        self,
        now: datetime,
        window: timedelta,
        page_size: int,
        continuation: str | None = None,
        states: tuple[ProcessState, ...] = SUPERVISED_STATES,
    ) -> ScanPage:
        """Return one page of records with ``CompleteBy < now - window`` (SPEC V1).

        The same streamed query as :meth:`scan_expired` with only an upper bound; the
        composite index (processState, completeBy) serves it, so its request charge grows
        with the overdue records, not the container. A null or missing CompleteBy never
        compares less than a string, so records without a deadline are not returned.

        Raises
        ------
        ValueError
            For a naive ``now``, a non-positive ``window`` or ``page_size`` outside 1..1000.
        """
        check_now(now)
        check_window(window)
        return self._scan_deadlines("c.completeBy < @high",
                                    {"@high": format_utc(now - window)},
                                    page_size, continuation, states)

    def _scan_deadlines(self, condition: str, bounds: dict[str, str], page_size: int,
                        continuation: str | None,
                        states: tuple[ProcessState, ...]) -> ScanPage:
        check_count("page_size", page_size)
        states = check_states(states)
        names = [f"@s{i}" for i in range(len(states))]
        sql = f"SELECT * FROM c WHERE c.processState IN ({', '.join(names)}) AND {condition}"
        parameters = [{"name": n, "value": s.value} for n, s in zip(names, states, strict=True)]
        parameters += [{"name": name, "value": value} for name, value in bounds.items()]
        documents, token, charge = self._page(sql, parameters, page_size, continuation)
        return ScanPage(
            records=tuple(_record(document) for document in documents),
            continuation=token,
            request_charge=charge.total,
        )

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """Count records per ProcessState, one COUNT query per state (see module docstring)."""
        counts: dict[ProcessState, int] = {}
        for state in check_states(states):
            with translated(f"count {state.value}"):
                values = self._container.query_items(
                    _COUNT_SQL,
                    parameters=[{"name": "@state", "value": state.value}],
                    enable_cross_partition_query=True,
                )
                # SELECT VALUE COUNT(1) yields numbers; the SDK types every item as a document.
                counts[state] = int(sum(cast(Iterable[int], values)))
        return counts

    def close(self) -> None:
        """Nothing to release: the client's connection pool belongs to the caller."""

    def _page(
        self, sql: str, parameters: list[dict[str, Any]], size: int, continuation: str | None
    ) -> tuple[list[dict[str, Any]], str | None, RequestCharge]:
        charge = RequestCharge()
        with translated("query state records"):
            # by_page is typed as a plain iterator of pages; what it returns is azure-core's
            # PageIterator, which carries the continuation token.
            pages = cast(PageIterator[dict[str, Any]], self._container.query_items(
                sql,
                parameters=parameters,
                enable_cross_partition_query=True,
                max_item_count=size,
                response_hook=charge,
            ).by_page(continuation))
            documents = list(next(pages, []))
            return documents, pages.continuation_token, charge
