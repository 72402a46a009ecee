"""The slots of MAX_PROCESSING on Cosmos DB: one ETag-fenced document beside the records.

Cosmos DB has no transaction across partitions, and each state record is its own
partition, so counting Processing records and claiming one cannot be one step. A claim
instead first takes a slot in one document, ``{"holders": {orderId: {"lockedBy",
"attempt"}}}``, written with its ETag (IfNotModified): of two claims that read the same
version only one writes it. Only then is the record claimed, with its own ETag.

A slot is not given back when its attempt ends; a claim that finds every slot taken
frees the stale ones (:meth:`ProcessingSlots.free_stale`): a holder whose record is not
Processing with that LockedBy, unless a claim of that very attempt may still be on its
way (the record is Pending and unlocked, one attempt short). Such a record is rewritten
first, which changes its ETag, so that claim fails: the slot is freed only once the
attempt can no longer start under it. A holder whose claim lost its race is freed the
same way, so a lost race never costs a slot for long.
"""

from __future__ import annotations

from typing import Any

from azure.core import MatchConditions
from azure.cosmos import ContainerProxy

from orders.models import ProcessState, StateRecord
from orders.stores._cosmos import create_document, read_document, translated
from orders.stores.errors import PreconditionFailedError

SLOTS_ID = "~processing-slots"
"""Id and partition key of the slots document: never an OrderID (no ``~`` in one) nor an
order key (client ids start with a letter or digit)."""

_PROCESSING_SQL = ("SELECT c.orderId, c.lockedBy FROM c WHERE c.processState = @state "
                   "AND c.orderId != @slots")

Holders = dict[str, dict[str, Any]]


class ProcessingSlots:
    """Read, take and free the slots of one state container.

    Parameters
    ----------
    container : azure.cosmos.ContainerProxy
        The state container.
    get : callable
        Point-reads a state record (the store's ``get``).
    replace : callable
        The store's conditional ``replace``, used to fence off a claim still on its way.
    """

    def __init__(self, container: ContainerProxy, get: Any, replace: Any) -> None:
        self._container, self._get, self._replace = container, get, replace

    def read(self) -> tuple[Holders, str]:
        """Return the holders and the document's ETag, creating the document if missing."""
        what = "read the processing slots"
        found = read_document(self._container, SLOTS_ID, SLOTS_ID, what)
        if found is None:
            found = create_document(self._container, {"id": SLOTS_ID, "orderId": SLOTS_ID,
                                                      "holders": {}}, what)
            if found is None:  # created by another claim meanwhile
                found = read_document(self._container, SLOTS_ID, SLOTS_ID, what)
        if found is None:
            raise PreconditionFailedError(f"{what}: the document was deleted meanwhile")
        return dict(found["holders"]), found["_etag"]

    def write(self, holders: Holders, etag: str) -> bool:
        """Write ``holders`` if the document is still at ``etag``; False if it changed."""
        try:
            with translated("write the processing slots"):
                self._container.replace_item(
                    item=SLOTS_ID, body={"id": SLOTS_ID, "orderId": SLOTS_ID,
                                         "holders": holders},
                    etag=etag, match_condition=MatchConditions.IfNotModified)
        except PreconditionFailedError:
            return False
        return True

    def take(self, holders: Holders, record: StateRecord, limit: int) -> str:
        """Add ``record``'s claim to ``holders``: ``take``, ``full`` or ``stale``.

        ``stale``: the record changed since it was read, so its claim would fail anyway.
        A slot this attempt holds already (a claim retried, or made twice at once) is
        taken again: the caller writes the document either way, so a slot freed
        meanwhile makes that write fail instead of letting the claim through unslotted.
        """
        mine = holders.get(record.order_key)
        if mine is not None and mine["lockedBy"] == record.locked_by:
            return "take"
        if mine is not None:
            # An earlier attempt's slot: this claim replaces it only if the record is still
            # the version it read, on which no claim of another attempt can succeed.
            current = self._get(record.order_key)
            if current is None or current.etag != record.etag:
                return "stale"
            del holders[record.order_key]
        if len(holders) >= limit:
            self.free_stale(holders)
        if len(holders) >= limit:
            return "full"
        holders[record.order_key] = {"lockedBy": record.locked_by, "attempt": record.attempt}
        return "take"

    def free_stale(self, holders: Holders) -> None:
        """Remove from ``holders`` every slot whose attempt no longer runs or can start."""
        with translated("list Processing records"):
            running = {(d["orderId"], d.get("lockedBy")) for d in self._container.query_items(
                _PROCESSING_SQL, parameters=[{"name": "@state",
                                              "value": ProcessState.PROCESSING.value},
                                             {"name": "@slots", "value": SLOTS_ID}],
                enable_cross_partition_query=True)}
        for order_key, slot in list(holders.items()):
            if (order_key, slot["lockedBy"]) not in running and self._stale(order_key, slot):
                del holders[order_key]

    def _stale(self, order_key: str, slot: dict[str, Any]) -> bool:
        """Say whether ``slot`` can be freed, fencing off a claim of it still on its way."""
        current = self._get(order_key)
        if current is None:
            return True
        if current.process_state is ProcessState.PROCESSING:
            return bool(current.locked_by != slot["lockedBy"])
        if (current.process_state is not ProcessState.PENDING or current.locked_by is not None
                or current.attempt >= slot["attempt"]):
            return True  # that attempt was claimed before, or cannot be claimed now
        try:
            self._replace(current)  # a new ETag: the claim read before it cannot succeed
        except PreconditionFailedError:
            return False  # the record changed meanwhile: keep the slot, look again later
        return True
