"""State store on Azure Cosmos DB; conditional writes use ``MatchConditions.IfNotModified``.

Query shapes also run on the local test server, whose gaps
``tests/orders/stores/test_cosmos_server_gaps.py`` pins:

* Scans are cross-partition filters without ORDER BY, TOP, OFFSET/LIMIT or DISTINCT, so
  the gateway streams them by continuation token (page size ``max_item_count``).
* Newest-first reads are one bounded ``TOP @limit ... ORDER BY c.updatedAt DESC`` each.
* Counts are one ``COUNT(1)`` per state: the test server cannot parse GROUP BY, and
  admission control counts in-flight states only.
* The test server ignores a query's ``partition_key=``, so a single-partition query also
  filters ``c.orderId = @pk``; it rejects transactional batches (none is needed:
  MAX_PROCESSING is kept by an ETag-fenced slots document, :mod:`orders.stores.cosmos_slots`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from azure.core import MatchConditions
from azure.core.paging import PageIterator
from azure.cosmos import ContainerProxy

from clocks import Clock, SystemClock
from orders.models import ProcessState, StateRecord, format_utc
from orders.stores._cosmos import (
    CosmosAdapter,
    RequestCharge,
    create_document,
    from_document,
    read_document,
    still_there,
    to_document,
    translated,
)
from orders.stores._records import keep_record, require_etag, stamp
from orders.stores._state_scans import StateScans
from orders.stores.cosmos_slots import ProcessingSlots
from orders.stores.errors import PreconditionFailedError
from orders.stores.ports import (
    AnyClient,
    Created,
    ScanPage,
    StateChange,
    check_claim,
    check_count,
    check_states,
)

_SLOT_TRIES = 50
"""Rounds of read-take-write of the slots document before a claim gives up for now."""

_STARTABLE_SQL = (
    "SELECT * FROM c WHERE c.processState = @state AND IS_NULL(c.lockedBy) "
    "AND (IS_NULL(c.notBefore) OR c.notBefore <= @now)"
)
_STARTABLE_OF_CLIENT_SQL = _STARTABLE_SQL + " AND c.clientId = @client"
_STARTABLE_OF_NO_CLIENT_SQL = _STARTABLE_SQL + " AND IS_NULL(c.clientId)"
# TOP bounds what the per-client count reads (X3): at most @limit index entries.
# An object per record, so a record without ``work`` (written before it) still counts.
_OF_CLIENT_SQL = ('SELECT TOP @limit VALUE {{"w": c.work}} FROM c WHERE c.clientId = @client '
                  "AND c.processState IN ({states})")
_BY_STATE_SQL = "SELECT * FROM c WHERE c.processState = @state"
_COUNT_SQL = "SELECT VALUE COUNT(1) FROM c WHERE c.processState = @state"
_COUNT_IN_SQL = "SELECT VALUE COUNT(1) FROM c WHERE c.processState IN ({states})"
# Bounded newest-first reads for the dashboard (S7, X8): TOP with ORDER BY, one
# query each; the SDK merges the partitions' ordered answers. The indexing policy
# (infra/app/cosmos.bicep) includes /updatedAt/? and (processState, updatedAt DESC).
_RECENT_SQL = ("SELECT TOP @limit * FROM c WHERE c.processState = @state "
               "ORDER BY c.updatedAt DESC")
_CHANGES_SQL = ("SELECT TOP @limit c.processState, c.createdAt, c.updatedAt FROM c "
                "WHERE c.updatedAt >= @since ORDER BY c.updatedAt DESC")


def _state_parameters(states: tuple[ProcessState, ...]) -> tuple[str, list[dict[str, Any]]]:
    """Return ``"@s0, @s1, ..."`` for an ``IN (...)`` and the query parameters naming them."""
    names = [f"@s{i}" for i in range(len(states))]
    return ", ".join(names), [{"name": n, "value": s.value}
                              for n, s in zip(names, states, strict=True)]


def _record(document: dict[str, Any]) -> StateRecord:
    return StateRecord.model_validate(from_document(document, with_etag=True))


SNAPSHOT_PREFIX = "~snapshot-"
"""Id and partition key prefix of snapshot documents: never an order key (no ``~`` start)."""


class CosmosStateStore(CosmosAdapter, StateScans):
    """State store in a Cosmos DB container (S2, S3, V1, V2, X4)."""

    def __init__(self, container: ContainerProxy, *, clock: Clock | None = None) -> None:
        super().__init__(container)
        self._clock = clock or SystemClock()
        self._slots = ProcessingSlots(container, self.get, self.replace)

    def create_if_absent(self, record: StateRecord) -> Created[StateRecord]:
        """See :meth:`orders.stores.ports.StateStore.create_if_absent`."""
        stored = stamp(record, etag=None, now=self._clock.now())
        what = f"create state record {record.order_key!r}"
        document = create_document(self._container, to_document(stored, stored.order_key),
                                   what)
        if document is not None:
            return Created(_record(document), created=True)
        # 409: the id exists; compare
        return keep_record(still_there(self.get(record.order_key), what, "record"), record)

    def get(self, order_key: str) -> StateRecord | None:
        """Return the record with its ETag (a point read), or None."""
        document = read_document(self._container, order_key, order_key,
                                 f"read state record {order_key!r}")
        return None if document is None else _record(document)

    def replace(self, record: StateRecord) -> StateRecord:
        """See :meth:`orders.stores.ports.StateStore.replace` (Cosmos DB answers 412 or 404)."""
        expected = require_etag(record)
        stored = stamp(record, etag=None, now=self._clock.now())
        with translated(f"replace state record {record.order_key!r}"):
            document = self._container.replace_item(
                item=record.order_key,
                body=to_document(stored, stored.order_key),
                etag=expected,
                match_condition=MatchConditions.IfNotModified,
            )
        return _record(document)

    def claim_within(self, record: StateRecord, limit: int) -> StateRecord | None:
        """Take a slot of ``limit`` in the slots document, then claim the record.

        See :meth:`orders.stores.ports.StateStore.claim_within` and
        :mod:`orders.stores.cosmos_slots`: a Processing record always holds a slot, so
        there are never more than ``limit``.
        """
        check_claim(record, limit)
        require_etag(record)
        for _ in range(_SLOT_TRIES):
            holders, etag = self._slots.read()
            outcome = self._slots.take(holders, record, limit)
            if outcome == "full":
                return None
            if outcome == "stale":
                raise PreconditionFailedError(
                    f"orderId {record.order_key!r}: the record changed since it was read")
            if self._slots.write(holders, etag):
                return self.replace(record)
        return None  # the slots kept changing: the starter's next run claims it

    def _startable(self, now: datetime, limit: int, state: ProcessState,
                   client_id: str | None | AnyClient) -> list[StateRecord]:
        # One cross-partition page of at most ``limit`` items; no order is guaranteed.
        parameters = [{"name": "@state", "value": state.value},
                      {"name": "@now", "value": format_utc(now)}]
        sql = _STARTABLE_SQL
        if client_id is None:
            sql = _STARTABLE_OF_NO_CLIENT_SQL
        elif not isinstance(client_id, AnyClient):
            sql = _STARTABLE_OF_CLIENT_SQL
            parameters.append({"name": "@client", "value": client_id})
        documents, _, _ = self._page(sql, parameters, limit, None)
        return [_record(document) for document in documents]

    def _count_of_client(self, client_id: str, states: tuple[ProcessState, ...],
                         limit: int) -> int:
        names, parameters = _state_parameters(states)
        with translated(f"count {', '.join(s.value for s in states)} of client {client_id}"):
            found = self._container.query_items(
                _OF_CLIENT_SQL.format(states=names),
                parameters=[{"name": "@limit", "value": limit},
                            {"name": "@client", "value": client_id}, *parameters],
                enable_cross_partition_query=True)
            # A record written before work was kept has none: it weighs 1.
            weights = (row.get("w") if isinstance(row, dict) else None for row in found)
            return min(sum(w if isinstance(w, int) and w > 0 else 1 for w in weights), limit)

    def _count_in(self, states: tuple[ProcessState, ...]) -> int:
        names, parameters = _state_parameters(states)
        with translated(f"count {', '.join(s.value for s in states)}"):
            values = self._container.query_items(
                _COUNT_IN_SQL.format(states=names), parameters=parameters,
                enable_cross_partition_query=True)
            # SELECT VALUE COUNT(1) yields numbers; the SDK types every item as a document.
            return int(sum(cast(Iterable[int], values)))

    def find_by_state(
        self, state: ProcessState, page_size: int, continuation: str | None = None
    ) -> ScanPage:
        """See :meth:`orders.stores.ports.StateStore.find_by_state` (a streamed query)."""
        (state,) = check_states([state])
        check_count("page_size", page_size)
        documents, token, charge = self._page(
            _BY_STATE_SQL, [{"name": "@state", "value": state.value}], page_size, continuation)
        return ScanPage(records=tuple(_record(document) for document in documents),
                        continuation=token, request_charge=charge.total)

    def _recent(self, state: ProcessState, limit: int) -> list[StateRecord]:
        with translated(f"recent {state.value} records"):
            found = self._container.query_items(
                _RECENT_SQL, parameters=[{"name": "@limit", "value": limit},
                                         {"name": "@state", "value": state.value}],
                enable_cross_partition_query=True)
            return [_record(document) for document in found]

    def _changes_since(self, since: datetime, limit: int) -> list[StateChange]:
        with translated("recent changes of state records"):
            found = self._container.query_items(
                _CHANGES_SQL, parameters=[{"name": "@limit", "value": limit},
                                          {"name": "@since", "value": format_utc(since)}],
                enable_cross_partition_query=True)
            return [StateChange(ProcessState(row["processState"]),
                                datetime.fromisoformat(row["createdAt"]),
                                datetime.fromisoformat(row["updatedAt"])) for row in found]

    def _scan_deadlines(self, low: datetime | None, high: datetime, page_size: int,
                        continuation: str | None,
                        states: tuple[ProcessState, ...]) -> ScanPage:
        """Run one streamed cross-partition query on the (processState, completeBy) index."""
        check_count("page_size", page_size)
        states = check_states(states)
        condition = "c.completeBy < @high"
        bounds = {"@high": format_utc(high)}
        if low is not None:
            condition = "c.completeBy >= @low AND " + condition
            bounds = {"@low": format_utc(low), **bounds}
        names, parameters = _state_parameters(states)
        sql = f"SELECT * FROM c WHERE c.processState IN ({names}) AND {condition}"
        parameters += [{"name": name, "value": value} for name, value in bounds.items()]
        documents, token, charge = self._page(sql, parameters, page_size, continuation)
        return ScanPage(
            records=tuple(_record(document) for document in documents),
            continuation=token,
            request_charge=charge.total,
        )

    def save_snapshot(self, name: str, body: dict[str, Any]) -> None:
        """See the port; one ``upsert_item`` of ``~snapshot-<name>`` beside the records."""
        key = SNAPSHOT_PREFIX + name
        with translated(f"save snapshot {name}"):
            self._container.upsert_item(body={"id": key, "orderId": key, "body": body})

    def load_snapshot(self, name: str) -> dict[str, Any] | None:
        """See the port; one point read."""
        key = SNAPSHOT_PREFIX + name
        found = read_document(self._container, key, key, f"load snapshot {name}")
        return None if found is None else dict(found["body"])

    def count_by_state(
        self, states: Iterable[ProcessState] | None = None
    ) -> dict[ProcessState, int]:
        """See :meth:`orders.stores.ports.StateStore.count_by_state`; one COUNT per state."""
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
